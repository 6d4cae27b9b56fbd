// OpenTelemetry's `url.query` with what a query carries as credentials left out: the value of each
// secret-like parameter is replaced by `REDACTED`, as the HTTP conventions ask (a signed URL's
// `X-Amz-Signature`, `sig` or `AWSAccessKeyId`, an API key, an OAuth `code`), its name kept.
import { SECRET_NAME } from "../config/secrets_mask.ts";

/** The text OpenTelemetry puts in place of a secret. */
export const REDACTED = "REDACTED";

/**
 * The most characters of a query a span keeps: a client can send a query of any length, and every
 * span of the request, and every exporter's batch, would carry it whole.
 */
export const MAX_QUERY = 2048;

// A name as the app would read it: `api%5Fkey` and `api_key` are one parameter, as are `+key` and
// `key`.
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " ")).trim();
  } catch {
    return name;
  }
}

// A parameter: up to the next `&`, or the next `;` that a parameter (`name=`) follows. A `;` with
// no `name=` after it is the value's, so that `token=a;b` hides `b` too.
const PARAMETER = /(?:[^&;]|;(?![^&;=]*=))+/g;

/**
 * `query` (without its `?`) with the value of every parameter whose name is secret-like (the rule
 * of the configuration's masks: `token`, `api_key`, a signature, `sig`, `key`, `code`, `jwt`, a
 * session id...) replaced by `REDACTED`: each parameter (between `&`s, or `;`s followed by a
 * parameter, which some servers read as `&`) is kept in its place, its name as sent, so that the query's shape stays readable.
 * Past {@linkcode MAX_QUERY} characters, the query is cut and ends with `...[truncated]`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactQuery } from "./query_redaction.ts";
 *
 * assert.equal(redactQuery("page=2&api_key=s3cret;sig=abc"), "page=2&api_key=REDACTED;sig=REDACTED");
 * ```
 */
export function redactQuery(query: string): string {
  // Redacted first, then cut: a secret's value is taken out whole, whatever it is followed by.
  const redacted = query.replace(PARAMETER, (parameter) => {
    const equals = parameter.indexOf("=");
    if (equals < 0) return parameter;
    return SECRET_NAME.test(decodedName(parameter.slice(0, equals)))
      ? `${parameter.slice(0, equals)}=${REDACTED}`
      : parameter;
  });
  return redacted.length > MAX_QUERY ? `${redacted.slice(0, MAX_QUERY)}...[truncated]` : redacted;
}
