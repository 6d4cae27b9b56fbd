import type { Context } from "hono";
import type { Class } from "../context/class_record.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { isJsonMediaType, unsupportedJsonEncoding } from "../http/media_type.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { ParameterBinder } from "./binder.ts";
import { badRequest, compileConverter, quote } from "./convert.ts";
import { classBinding, validateBody } from "./json_body.ts";
import { parseJson } from "../http/parse_json.ts";
import { queryValues } from "../http/query_string.ts";
import { isStandardSchema } from "./standard_schema.ts";

/** Produces one argument of a handler for a request. */
export interface ArgumentResolver {
  readonly resolve: (c: Context, request: HttpRequest | undefined) => unknown;
  /** `resolve` returns a promise (only the body does). */
  readonly async: boolean;
  /** `resolve` needs the request's `HttpRequest` (it is made once per request and shared). */
  readonly needsRequest: boolean;
}

const NOTHING = /\S/;

function sync(resolve: ArgumentResolver["resolve"], needsRequest = false): ArgumentResolver {
  return { resolve, async: false, needsRequest };
}

// Whether a request without a Content-Type has no body. The framing headers decide (RFC 9112:
// neither Content-Length nor Transfer-Encoding means none), except for a request built in code,
// which has neither even with a body, and a server that hands every request a stream (Deno): then
// the first chunk decides. Only a refused request gets here.
async function hasNoBody(c: Context, server: ServerRequest): Promise<boolean> {
  const length = server.header(c.req.raw, c.env, "content-length");
  // `0`, or `0, 0` where a server joined two fields of the same length.
  if (length !== null) return /^\s*0+\s*(,\s*0+\s*)*$/.test(length);
  if (server.header(c.req.raw, c.env, "transfer-encoding") !== null) return false;
  const stream = c.req.raw.body;
  if (stream === null) return true;
  try {
    const reader = stream.getReader(); // throws when the body was read already
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      if (value.byteLength > 0) {
        reader.cancel().catch(() => {});
        return false;
      }
    }
  } catch {
    return false; // bytes were on their way: a body, cut short
  }
}

function unsupported(type: string | null): HttpException {
  return new HttpException(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    `Content-Type must be application/json, got ${type === null ? "none" : quote(type)}`,
  );
}

/**
 * Compiles a binder into the closure that reads its argument from each request; `server` is how
 * the body binding reads what the server parsed already.
 */
export function compileArgument(binder: ParameterBinder, server: ServerRequest): ArgumentResolver {
  if (binder === HttpRequest) return sync((_c, request) => request, true);
  if (typeof binder !== "object" || binder === null || !("kind" in binder)) {
    throw new TypeError(
      "a binder must be PathVariable(), RequestParam(), RequestHeader(), RequestBody() or " +
        "HttpRequest",
    );
  }
  switch (binder.kind) {
    case "path": {
      const { name } = binder;
      const convert = compileConverter(binder.type, `Path variable '${name}'`);
      return sync((c) => convert(c.req.param(name) as string));
    }
    case "param":
    case "header": {
      const { name, required, hasDefault } = binder;
      const label = binder.kind === "param" ? `Request parameter '${name}'` : `Header '${name}'`;
      const convert = compileConverter(binder.type, label);
      const fallback = binder.default;
      const read = binder.kind === "param"
        ? (c: Context) => queryValues(c.req.url, name, true)[0]
        : (c: Context) => c.req.raw.headers.get(name) ?? undefined;
      return sync((c) => {
        const text = read(c);
        if (text !== undefined) return convert(text);
        if (hasDefault) return fallback;
        if (required) throw badRequest(`${label} is required`);
        return undefined;
      });
    }
    case "body": {
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
  }
}
