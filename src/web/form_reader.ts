import type { Context } from "hono";
import { EMPTY_FORM_BODY, type FormBody, urlEncodedBody } from "../http/form_body.ts";
import { HttpException } from "../http/http_exception.ts";
import type { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import {
  mediaTypeEssence,
  unsupportedCharset,
  unsupportedContentEncoding,
} from "../http/media_type.ts";
import { DEFAULT_MULTIPART_LIMITS, multipartBoundary } from "../http/multipart.ts";
import { readMultipart } from "../http/multipart_reader.ts";
import type { ServerRequest } from "../http/server_request.ts";
import { hasNoBody } from "./body_presence.ts";
import { badRequest, quote } from "./convert.ts";

const URLENCODED = "application/x-www-form-urlencoded";
const MULTIPART = "multipart/form-data";

/**
 * Whether a `RequestParam` missing from the query may be in the body: a method that carries one
 * (POST, and PUT, PATCH and DELETE, which Spring Boot's form filter reads too) and a form
 * `Content-Type`. Asked only when the query lacks the parameter, so a GET, or a request whose query
 * holds every parameter, never reads its body.
 */
export function mayHoldForm(c: Context, server: ServerRequest): boolean {
  const method = c.req.method;
  if (method !== "POST" && method !== "PUT" && method !== "PATCH" && method !== "DELETE") {
    return false;
  }
  const type = server.header(c.req.raw, c.env, "content-type");
  if (type === null) return false;
  // Two fields joined (`a/b, c/d`) have no one essence: such a body is not read.
  const essence = mediaTypeEssence(type);
  return essence === URLENCODED || essence === MULTIPART;
}

function unsupported(type: string | null, partsOnly: boolean): HttpException {
  return new HttpException(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    `Content-Type must be ${partsOnly ? MULTIPART : `${URLENCODED} or ${MULTIPART}`}, got ${
      type === null ? "none" : quote(type)
    }`,
  );
}

/**
 * Reads a request's form body once, for every argument of a route that reads one: a
 * `multipart/form-data` body as multipart_reader.ts reads it (whole within the body limit, else
 * as it arrives, under the `server.multipart.*` limits, its large file parts in temporary files
 * that the form's `release` deletes), or, unless `partsOnly`, an
 * `application/x-www-form-urlencoded` one through `request.bytes()`, under the body limit and
 * before any parsing. Rejects with a 400 for two `Content-Type`s or a multipart type without a
 * usable boundary, a 415 for another type, any `Content-Encoding` or a urlencoded `charset` other
 * than UTF-8, a 413 over a limit; a request without a body and without a type has no fields.
 */
export function readFormBody(
  c: Context,
  server: ServerRequest,
  request: HttpRequest,
  partsOnly: boolean,
): Promise<FormBody> {
  try {
    const type = server.header(c.req.raw, c.env, "content-type");
    // As for a JSON body: a comma may join two fields, and no second type may hide behind it.
    if (type !== null && type.includes(",")) {
      throw badRequest(`Content-Type must be given once, got ${quote(type)}`);
    }
    if (type === null) {
      return hasNoBody(c, server).then((none) => {
        if (none) return EMPTY_FORM_BODY;
        throw unsupported(type, partsOnly);
      });
    }
    const essence = mediaTypeEssence(type);
    const multipart = essence === MULTIPART;
    if (!multipart && (partsOnly || essence !== URLENCODED)) throw unsupported(type, partsOnly);
    const refused = unsupportedContentEncoding(
      server.header(c.req.raw, c.env, "content-encoding"),
    ) ?? (multipart ? undefined : unsupportedCharset(type, "form bodies"));
    if (refused !== undefined) throw new HttpException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, refused);
    if (multipart) {
      const boundary = multipartBoundary(type);
      const source = {
        raw: c.req.raw,
        request,
        declaredLength: server.header(c.req.raw, c.env, "content-length"),
        readAlready: server.body(c.env) !== undefined,
      };
      return readMultipart(source, boundary, server.multipart ?? DEFAULT_MULTIPART_LIMITS);
    }
    return request.bytes().then(urlEncodedBody);
  } catch (error) {
    return Promise.reject(error);
  }
}
