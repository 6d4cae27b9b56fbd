import type { Context } from "hono";
import type { Class } from "../context/class_record.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { isJsonMediaType, unsupportedJsonEncoding } from "../http/media_type.ts";
import type { ServerRequest } from "../http/server_request.ts";
import type { ParameterBinder, ScalarType } from "./binder.ts";
import { badRequest, compileConverter, quote } from "./convert.ts";
import { classBinding, validateBody } from "./json_body.ts";
import { parseJson } from "../http/parse_json.ts";
import { queryValues } from "../http/query_string.ts";
import { isStandardSchema } from "../config/standard_schema.ts";
import { hasNoBody } from "./body_presence.ts";
import type { FormBody } from "../http/form_body.ts";
import { mayHoldForm } from "./form_reader.ts";
import type { PathReader } from "./path_variables.ts";

/** Produces one argument of a handler for a request. */
export interface ArgumentResolver {
  readonly resolve: (c: Context, request: HttpRequest | undefined) => unknown;
  /** `resolve` returns a promise (only the body does). */
  readonly async: boolean;
  /** `resolve` needs the request's `HttpRequest` (it is made once per request and shared). */
  readonly needsRequest: boolean;
  /**
   * For an argument a form body may hold (`RequestParam`, `RequestPart`): its reading from that
   * body, when `resolve` returned {@linkcode FROM_BODY}.
   */
  readonly fromBody?: FormArgument;
}

/** How an argument is read from a form body, which the handler reads once for all of them. */
export interface FormArgument {
  readonly resolve: (form: FormBody) => unknown;
  /** Only a `multipart/form-data` body will do (a `RequestPart`). */
  readonly partsOnly: boolean;
}

/**
 * What `resolve` returns for an argument that waits for the form body: the handler then reads the
 * body once and asks `fromBody`. A request that needs no body gets its arguments synchronously.
 */
export const FROM_BODY: unique symbol = Symbol("from the form body");

// A part's text as sent: a leading byte-order mark is kept, not dropped.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const NOTHING = /\S/;

function sync(resolve: ArgumentResolver["resolve"], needsRequest = false): ArgumentResolver {
  return { resolve, async: false, needsRequest };
}

function unsupported(type: string | null): HttpException {
  return new HttpException(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    `Content-Type must be application/json, got ${type === null ? "none" : quote(type)}`,
  );
}

/**
 * Compiles a binder into the closure that reads its argument from each request; `server` is how
 * the body binding reads what the server parsed already, `rest` the route's `{*name}`, whose
 * value Hono does not give.
 */
export function compileArgument(
  binder: ParameterBinder,
  server: ServerRequest,
  rest?: PathReader["rest"],
): ArgumentResolver {
  if (binder === HttpRequest) return sync((_c, request) => request, true);
  if (typeof binder !== "object" || binder === null || !("kind" in binder)) {
    throw new TypeError(
      "a binder must be PathVariable(), RequestParam(), RequestHeader(), RequestBody(), " +
        "RequestPart() or HttpRequest",
    );
  }
  switch (binder.kind) {
    case "path": {
      const { name } = binder;
      const convert = compileConverter(binder.type, `Path variable '${name}'`);
      if (name === rest?.name) {
        const read = rest.read;
        return sync((c) => convert(read(c)));
      }
      return sync((c) => convert(c.req.param(name) as string));
    }
    case "param": {
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
        // The query first; a form body only when the query lacks the parameter.
        resolve: (c) => {
          const text = queryValues(c.req.url, name, true)[0];
          if (text !== undefined) return convert(text);
          return mayHoldForm(c, server) ? FROM_BODY : absent();
        },
        fromBody: {
          partsOnly: false,
          resolve: (form) => {
            const text = form.param(name);
            return text !== undefined ? convert(text) : absent();
          },
        },
      };
    }
    case "header": {
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
    case "part": {
      const { name, required, type } = binder;
      const label = `Request part '${name}'`;
      const convert = type === undefined || type === File
        ? undefined
        : compileConverter(type as ScalarType, label);
      return {
        async: false,
        needsRequest: false,
        resolve: () => FROM_BODY,
        fromBody: {
          partsOnly: true,
          resolve: (form) => {
            const part = form.part(name);
            if (part === undefined) {
              if (required) throw badRequest(`${label} is required`);
              return undefined;
            }
            if (part.filename !== undefined) {
              if (convert !== undefined) throw badRequest(`${label} must be a value, not a file`);
              // RFC 7578, 4.4: a part without a Content-Type is text/plain.
              return new File([part.body.slice()], part.filename, {
                type: part.contentType ?? "text/plain",
              });
            }
            if (type === File) throw badRequest(`${label} must be a file (a part with a filename)`);
            let text: string;
            try {
              text = strictUtf8.decode(part.body);
            } catch {
              throw badRequest(`${label} is not valid UTF-8`);
            }
            return convert === undefined ? text : convert(text);
          },
        },
      };
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
