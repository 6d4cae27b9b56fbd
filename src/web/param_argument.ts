import { queryValues } from "../http/query_string.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { BinderDescriptor } from "./binder_descriptor.ts";
import { type ArgumentResolver, FROM_BODY } from "./argument_resolver.ts";
import { badRequest, compileConverter } from "./convert.ts";
import { mayHoldForm, readFormBody } from "./form_reader.ts";

/**
 * The reader of `RequestParam(name, options)`: the query's first value, or when the query lacks
 * it, the form body's (read once by the handler for every argument that waits on it).
 */
export function paramArgument(
  binder: Extract<BinderDescriptor, { kind: "param" | "header" }>,
  server: ServerRequest,
): ArgumentResolver {
  const { name, required, hasDefault } = binder;
  const label = `Request parameter '${name}'`;
  const convert = compileConverter(binder.type, label);
  const fallback = binder.default;
  const absent = () => {
    if (hasDefault) return fallback;
    if (required) throw badRequest(`${label} is required`);
    return undefined;
  };
  return {
    async: false,
    needsRequest: false,
    resolve: (c) => {
      const text = queryValues(c.req.url, name, true)[0];
      if (text !== undefined) return convert(text);
      return mayHoldForm(c, server) ? FROM_BODY : absent();
    },
    fromBody: {
      partsOnly: false,
      read: readFormBody,
      resolve: (form) => {
        const text = form.param(name);
        return text !== undefined ? convert(text) : absent();
      },
    },
  };
}
