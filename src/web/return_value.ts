import { isBodyInit } from "../http/body.ts";
import { ResponseEntity } from "../http/response_entity.ts";

// Built once: `new Response` copies the init, so one object serves every request.
const JSON_INIT: ResponseInit = { headers: { "content-type": "application/json" } };
const TEXT_INIT: ResponseInit = { headers: { "content-type": "text/plain; charset=utf-8" } };
const NO_CONTENT: ResponseInit = { status: 204 };

/**
 * A handler's return value as a response: a `ResponseEntity` as it says, a `Response` as it is,
 * a string as text, `undefined` as 204, bytes and streams as they are, anything else as JSON.
 */
export function toResponse(value: unknown): Response {
  if (typeof value === "object" && value !== null) {
    if (value instanceof ResponseEntity) return value.toResponse();
    if (value instanceof Response) return value;
    if (isBodyInit(value)) return new Response(value);
  } else if (typeof value === "string") return new Response(value, TEXT_INIT);
  else if (value === undefined) return new Response(null, NO_CONTENT);
  else if (typeof value === "function" || typeof value === "symbol") {
    throw new TypeError(`A handler returned a ${typeof value}, which cannot be sent`);
  }
  return new Response(JSON.stringify(value), JSON_INIT);
}
