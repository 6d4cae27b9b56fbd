import type { BinderDescriptor } from "./binder_descriptor.ts";
import { type ArgumentResolver, sync } from "./argument_resolver.ts";
import { badRequest, compileConverter } from "./convert.ts";

/** The reader of `RequestHeader(name, options)`: the header's value, converted. */
export function headerArgument(
  binder: Extract<BinderDescriptor, { kind: "param" | "header" }>,
): ArgumentResolver {
  const { name, required, hasDefault } = binder;
  const label = `Header '${name}'`;
  const convert = compileConverter(binder.type, label);
  const fallback = binder.default;
  return sync((c) => {
    const text = c.req.raw.headers.get(name) ?? undefined;
    if (text !== undefined) return convert(text);
    if (hasDefault) return fallback;
    if (required) throw badRequest(`${label} is required`);
    return undefined;
  });
}
