// The requests whose answer stays open for as long as its stream runs (an `@SseMapping` stream),
// marked by the code that makes such an answer and read by the server: Bun's idle timer would cut
// one in a silence longer than its 10 s, where the stream's heartbeats and its end bound it. Once
// the stream ends, the kept-alive connection is the idle timer's again. Apart from both, so that
// neither carries the other.

// A marked request, and what the server runs when its stream ends (nothing until it asks).
const streamed = /* @__PURE__ */ new WeakMap<Request, (() => void) | undefined>();

/** Marks `request` as answered by a stream that may fall silent for a while. */
export function markStreamed(request: Request): void {
  streamed.set(request, undefined);
}

/** Its stream ended: what the server asked for runs, and the request is marked no more. */
export function streamEnded(request: Request): void {
  const ended = streamed.get(request);
  streamed.delete(request);
  ended?.();
}

/**
 * Whether `request` is answered by a stream still running; if it is, `ended` runs when it ends
 * (the server gives the connection its idle timeout back).
 */
export function isStreamed(request: Request, ended?: () => void): boolean {
  if (!streamed.has(request)) return false;
  if (ended !== undefined) streamed.set(request, ended);
  return true;
}
