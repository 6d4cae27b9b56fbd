import { sameKnownBody } from "../http/body_length.ts";

/**
 * An answer with the headers middleware set before the route ran (`c.header()` ahead of
 * `next()`, or CORS on `c.res`), taken as defaults: the answer's own value of a header wins,
 * `Set-Cookie` values add up (a session cookie and a CSRF cookie both go), and `Vary` lists the
 * tokens of both. Hono's own merge does the opposite (middleware values replace the route's,
 * cookies included), which would let a global `Cache-Control` default override a route's
 * `no-store`.
 */
export function withDefaultHeaders(answer: Response, defaults: Headers): Response {
  let adds = false;
  // `forEach`: Deno's `for...of` over Headers sorts the list again at every step.
  defaults.forEach((_value, name) => {
    adds ||= name === "set-cookie" || name === "vary" || !answer.headers.has(name);
  });
  if (!adds) return answer;
  const headers = new Headers(answer.headers);
  addDefaultHeaders(headers, defaults);
  // A new response, not the answer's headers changed in place: a redirect's and a `fetch` answer's
  // headers are immutable, and a response a route returns again (a constant with no body) would
  // gather every request's defaults.
  return sameKnownBody(
    answer,
    new Response(answer.body, {
      status: answer.status,
      statusText: answer.statusText,
      headers,
    }),
  );
}

/**
 * Adds `defaults` to `headers` (an answer's own, about to be sent) under the rules of
 * {@linkcode withDefaultHeaders}, in place.
 */
export function addDefaultHeaders(headers: Headers, defaults: Headers): void {
  defaults.forEach((value, name) => {
    if (name === "set-cookie") headers.append(name, value);
    else if (name === "vary") headers.set(name, mergeVary(headers.get(name), value));
    else if (!headers.has(name)) headers.set(name, value);
  });
}

// `Vary` is a list of field names, compared without case; `*` stands for all of them.
function mergeVary(own: string | null, extra: string): string {
  const tokens: string[] = [];
  const seen = new Set<string>();
  for (const token of `${own ?? ""},${extra}`.split(",").map((t) => t.trim())) {
    if (token === "*") return "*";
    if (token !== "" && !seen.has(token.toLowerCase())) {
      seen.add(token.toLowerCase());
      tokens.push(token);
    }
  }
  return tokens.join(", ");
}
