// The path the client wrote, as the bean's connection sends it: a URL reads a segment `.` or `..`
// as a step (WHATWG URL's dot segments), a `\` as a `/` and a `#` as the end of what is sent,
// where the client meant a document id or an index name. The package's own connection writes the
// path into the request as it is; `fetch` cannot, and the connection sends the same request
// whichever transport it takes.

// A segment `.` or `..`, however its dots are written.
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?=\/|$)/i;
// What a URL may write otherwise than given: percent-encoded in a path or a query, or an empty
// query, which it leaves out.
const REWRITTEN = /[^\x21-\x7e]|["'<>^`{|}]|\?$/;

/**
 * `path` as a URL writes it, segment for segment: a `\` and a `#` percent-encoded, as the client
 * encodes them in the ids and names it builds a path of; `undefined` where a segment is `.` or
 * `..` (however its dots are written), which no encoding keeps apart from a step.
 */
export function sendablePath(path: string): string | undefined {
  let sent = path;
  if (sent.includes("\\")) sent = sent.replaceAll("\\", "%5C");
  if (sent.includes("#")) sent = sent.replaceAll("#", "%23");
  const end = sent.indexOf("?");
  if (DOT_SEGMENT.test(end === -1 ? sent : sent.slice(0, end))) return undefined;
  // Most paths are left as they are: no URL needs to be made of them.
  if (!REWRITTEN.test(sent)) return sent;
  const url = new URL(`http://host${sent}`);
  return `${url.pathname}${url.search}`;
}
