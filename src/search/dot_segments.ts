// The path the client wrote, as the bean's connection can send it through `fetch`: a URL reads a
// segment `.` or `..` as a step (WHATWG URL's dot segments), a `\` as a `/` and a `#` as the end of
// what is sent, where the client meant a document id or an index name. The package's own
// connection writes the path into the request as it is; `fetch` cannot.

/**
 * `path` as a URL keeps it, segment for segment: a `\` and a `#` percent-encoded, as the client
 * encodes them in the ids and names it builds a path of; `undefined` where a segment is `.` or
 * `..` (however its dots are written), which no encoding keeps apart from a step.
 */
export function sendablePath(path: string): string | undefined {
  const sent = path.replaceAll("\\", "%5C").replaceAll("#", "%23");
  const end = sent.indexOf("?");
  const segments = (end === -1 ? sent : sent.slice(0, end)).split("/");
  return segments.some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment)) ? undefined : sent;
}
