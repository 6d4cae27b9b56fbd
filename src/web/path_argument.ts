import type { BinderDescriptor } from "./binder_descriptor.ts";
import { type ArgumentResolver, sync } from "./argument_resolver.ts";
import { compileConverter } from "./convert.ts";
import type { PathReader } from "./path_variables.ts";

/** The reader of `PathVariable(name, type)`: the segment's text, converted. */
export function pathArgument(
  binder: Extract<BinderDescriptor, { kind: "path" }>,
  _server: unknown,
  rest: PathReader["rest"] | undefined,
): ArgumentResolver {
  const { name } = binder;
  const convert = compileConverter(binder.type, `Path variable '${name}'`);
  if (name === rest?.name) {
    const read = rest.read;
    return sync((c) => convert(read(c)));
  }
  return sync((c) => convert(c.req.param(name) as string));
}
