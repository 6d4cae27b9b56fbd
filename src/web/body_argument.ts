import type { Class } from "../context/class.ts";
import { isStandardSchema } from "../config/standard_schema.ts";
import { HttpException } from "../http/http_exception.ts";
import type { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { isJsonMediaType, unsupportedJsonEncoding } from "../http/media_type.ts";
import { parseJson } from "../http/parse_json.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { BinderDescriptor } from "./binder_descriptor.ts";
import type { ArgumentResolver } from "./argument_resolver.ts";
import { hasNoBody } from "./body_presence.ts";
import { badRequest, quote } from "./convert.ts";
import { classBinding, validateBody } from "./json_body.ts";

const NOTHING = /\S/;

function unsupported(type: string | null): HttpException {
  return new HttpException(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    `Content-Type must be application/json, got ${type === null ? "none" : quote(type)}`,
  );
}

/**
 * The reader of `RequestBody(typeOrSchema)`: the JSON body, bound to the class or checked by the
 * schema.
 */
export function bodyArgument(
  binder: Extract<BinderDescriptor, { kind: "body" }>,
  server: ServerRequest,
): ArgumentResolver {
  const { target } = binder;
  const finish: (value: unknown) => unknown = target === undefined
    ? (value) => value
    : isStandardSchema(target)
    ? (value) => validateBody(target, value)
    : classBinding(target as Class);
  return {
    async: true,
    needsRequest: true,
    // Not async: the body's own promise is the only one a request waits on.
    resolve: (c, request) => {
      const type = server.header(c.req.raw, c.env, "content-type");
      // `Content-Type` is one field, and servers join two of them with a comma. Inside quotes
      // a comma could be a parameter's, but `a/b; p="` + `, c/d; q="` joins into a value
      // that parses as one type either way: any comma is refused, so no second type hides.
      if (type !== null && type.includes(",")) {
        throw badRequest(`Content-Type must be given once, got ${quote(type)}`);
      }
      if (type === null) {
        return hasNoBody(c, server).then((none) => {
          throw none ? badRequest("Required request body is missing") : unsupported(type);
        });
      }
      if (!isJsonMediaType(type)) throw unsupported(type);
      const encoding = unsupportedJsonEncoding(
        type,
        server.header(c.req.raw, c.env, "content-encoding"),
      );
      if (encoding !== undefined) {
        throw new HttpException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, encoding);
      }
      return (request as HttpRequest).text().then((text) => {
        if (!NOTHING.test(text)) throw badRequest("Required request body is missing");
        return finish(parseJson(text));
      });
    },
  };
}
