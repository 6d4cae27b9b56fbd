import type { Context } from "hono";
import type { Class } from "../context/class_record.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { isJsonMediaType } from "../http/media_type.ts";
import type { ParameterBinder } from "./binder.ts";
import { badRequest, compileConverter } from "./convert.ts";
import { parseJsonBody, toInstance, validateBody } from "./json_body.ts";
import { isStandardSchema } from "./standard_schema.ts";
import { rawBodyOf, requestHeader } from "../runtime/node_incoming.ts";

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

/** Compiles a binder into the closure that reads its argument from each request. */
export function compileArgument(binder: ParameterBinder): ArgumentResolver {
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
        ? (c: Context) => c.req.query(name)
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
        : (value) => toInstance(target as Class, value);
      return {
        async: true,
        needsRequest: true,
        // Not async: the body's own promise is the only one a request waits on.
        resolve: (c, request) => {
          const raw = c.req.raw;
          const type = requestHeader(raw, c.env, "content-type");
          if (type === null || !isJsonMediaType(type)) {
            // Asked only here: `Request.body` makes a stream on Bun, and a whole web Request on
            // Node's adapter, which a JSON body read from `rawBody` never needs.
            if (rawBodyOf(c.env) === undefined && raw.body === null) {
              throw badRequest("Required request body is missing");
            }
            throw new HttpException(
              HttpStatus.UNSUPPORTED_MEDIA_TYPE,
              `Content-Type must be application/json, got ${type === null ? "none" : `"${type}"`}`,
            );
          }
          return (request as HttpRequest).text().then((text) => {
            if (!NOTHING.test(text)) throw badRequest("Required request body is missing");
            return finish(parseJsonBody(text));
          });
        },
      };
    }
  }
}
