// What an iterable an `@SseMapping` method returns may hold to learn of the stream it feeds: the
// route's label, for its own log lines, and how to end the stream from outside, where it cannot
// wait to be pulled (a broadcast subscription that drops a client whose buffer is full).

/** The key of the method called once the stream of an `@SseMapping` answer is open. */
export const STREAM_OPENED: unique symbol = Symbol("thaw.sse.opened");

/** An iterable that wants to know the stream it feeds. */
export interface StreamOwner {
  /** Called once, as the stream opens: `label` names the route; `end` ends the stream. */
  [STREAM_OPENED](label: string, end: () => void): void;
}
