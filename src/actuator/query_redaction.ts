// OpenTelemetry's `url.query` with what a query carries as credentials left out: the value of each
// secret-like parameter is replaced by `REDACTED`, as the HTTP conventions ask (a signed URL's
// `X-Amz-Signature`, `sig` or `AWSAccessKeyId`, an API key, an OAuth `code`), its name kept.
import { SECRET_NAME } from "../config/secrets_mask.ts";

// Names too short or too common for the secret-like rule (which matches within a name), taken
// whole: a shared-access signature's `sig`, a bare `key`, an OAuth authorization `code`.
const SECRET_WHOLE = /^(?:sig|key|code)$/i;

/** The text OpenTelemetry puts in place of a secret. */
export const REDACTED = "REDACTED";

// A name as the app would read it: `api%5Fkey` and `api_key` are one parameter.
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}

/**
 * `query` (without its `?`) with the value of every parameter whose name is secret-like (the rule
 * of the configuration's masks, and `sig`, `key`, `code`) replaced by `REDACTED`: each parameter
 * (between `&`s) is kept in its place, its name as sent, so that the query's shape stays readable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactQuery } from "./query_redaction.ts";
 *
 * assert.equal(redactQuery("page=2&api_key=s3cret&sig=abc"), "page=2&api_key=REDACTED&sig=REDACTED");
 * ```
 */
export function redactQuery(query: string): string {
  return query.split("&").map((parameter) => {
    const equals = parameter.indexOf("=");
    if (equals < 0) return parameter;
    const name = decodedName(parameter.slice(0, equals));
    return SECRET_NAME.test(name) || SECRET_WHOLE.test(name)
      ? `${parameter.slice(0, equals)}=${REDACTED}`
      : parameter;
  }).join("&");
}
