// The requests whose answer stays open for as long as its stream runs (an `@SseMapping` stream),
// marked by the code that makes such an answer and read by the server: Bun's idle timer would cut
// one in a silence longer than its 10 s, where the stream's heartbeats and its end bound it. Apart
// from both, so that neither carries the other.

const streamed = /* @__PURE__ */ new WeakSet<Request>();

/** Marks `request` as answered by a stream that may fall silent for a while. */
export function markStreamed(request: Request): void {
  streamed.add(request);
}

/** Whether `request` is answered by such a stream. */
export function isStreamed(request: Request): boolean {
  return streamed.has(request);
}
