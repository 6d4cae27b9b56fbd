// The body of an `@SseMapping` answer: the events of an async iterator, pulled one at a time as
// the server takes them, so that a slow client holds back the iterator (backpressure) rather than
// letting frames pile up in memory. Nothing is committed until the first event or heartbeat: an
// error before it is still an ordinary error answer; one after it can only end the stream.
import type { Clock, Timer } from "../runtime/clock.ts";
import { HEARTBEAT, sseFrame } from "./sse_frame.ts";

/** What an event stream is opened with. */
export interface EventStreamOptions {
  /** The longest silence before a heartbeat comment, in milliseconds; 0: none. */
  readonly heartbeatMs: number;
  readonly clock: Clock;
  /** Takes an error once the stream has begun (the iterator's, a frame's, its `return()`'s). */
  readonly failed: (error: unknown) => void;
  /** The client's request's signal, read until the stream begins: the client left. */
  readonly signal?: AbortSignal | undefined;
  /** Runs once, when the stream ends for whatever reason. */
  readonly ended?: () => void;
  /** Takes what settles once the iterator's `return()`, where called, has (a shutdown waits). */
  readonly returning?: (done: Promise<void>) => void;
}

/** How an event stream's first wait ended: see {@linkcode EventStream.begun}. */
export type StreamStart = "begun" | "done" | "ended";

/** An event stream: its body, when it begins, and what ends it early (a shutdown). */
export interface EventStream {
  readonly body: ReadableStream<Uint8Array>;
  /**
   * Resolves once the first event or heartbeat is in the body (`"begun"`), or the stream ended
   * before one, the body then empty: `"done"` when the iterator was done, `"ended"` when the
   * client left or `end()` was called. Rejects with what the iterator or the first frame threw
   * first.
   */
  readonly begun: Promise<StreamStart>;
  /** Ends the stream now and returns the iterator; nothing once it ended. */
  end(): void;
  /** The events put in the body so far, and the bytes put there (heartbeats included). */
  readonly sent: { readonly messages: number; readonly bytes: number };
}

const encoder = /* @__PURE__ */ new TextEncoder();
const ignore = (): void => {};

/**
 * The stream of `iterator`'s events, its first event pulled at once: it begins with it, or with a
 * heartbeat when none came within `heartbeatMs`. What the iterator or the first frame threw
 * before that rejects `begun` (the iterator is returned when it is not the one that failed). From then on
 * the iterator is pulled once for each frame the server takes, with at most one frame waiting; an
 * error ends the stream and goes to `failed`; the client leaving or `end()` calls the iterator's
 * `return()` (an async generator runs its `finally` once it reaches its next `yield` or ends).
 */
export function openEventStream(
  iterator: AsyncIterator<unknown>,
  options: EventStreamOptions,
): EventStream {
  const { clock, heartbeatMs, signal, returning = ignore } = options;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let begun = false;
  let ended = false;
  // The iterator's `next()` in progress, whoever asked for it (the first wait, or a pull).
  let inflight: Promise<void> | undefined;
  let timer: Timer | undefined;
  let resolveBegun!: (start: StreamStart) => void;
  let rejectBegun!: (error: unknown) => void;
  const begins = new Promise<StreamStart>((resolve, reject) => {
    resolveBegun = resolve;
    rejectBegun = reject;
  });

  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    pull: () => step(),
    cancel: () => finish(true),
  }, { highWaterMark: 0 });
  const sent = { messages: 0, bytes: 0 };
  const stream: EventStream = { body, begun: begins, end: () => finish(true), sent };

  // Once begun, the server cancels the body when the client leaves; the signal is only read
  // until then (Deno also aborts it once an answer has gone, and warns of that to whoever listens).
  const begin = (start: StreamStart): void => {
    if (begun) return;
    begun = true;
    signal?.removeEventListener("abort", leave);
    resolveBegun(start);
  };
  const arm = (): void => {
    timer?.cancel();
    // Held: an open stream is the app's work, as a schedule is.
    timer = heartbeatMs > 0 ? clock.after(heartbeatMs, beat, { keepAlive: true }) : undefined;
  };
  const write = (text: string): void => {
    const bytes = encoder.encode(text);
    controller.enqueue(bytes);
    sent.bytes += bytes.byteLength;
    if (text !== HEARTBEAT) sent.messages++;
    begin("begun");
    arm();
  };
  // Silence: only while the iterator keeps the server waiting, and with no frame queued (a client
  // that reads nothing gets no more than one).
  const beat = (): void => {
    timer = undefined;
    if (ended) return;
    if (inflight !== undefined && (controller.desiredSize ?? 0) >= 0) write(HEARTBEAT);
    else arm();
  };
  function finish(returnIterator: boolean): void {
    if (ended) return;
    ended = true;
    timer?.cancel();
    signal?.removeEventListener("abort", leave);
    try {
      controller.close();
    } catch {
      // Cancelled by the server: closed already.
    }
    begin(returnIterator ? "ended" : "done"); // Returned: ended from outside, not done.
    if (returnIterator) returning(returned(iterator, options.failed));
    options.ended?.();
  }
  const fail = (error: unknown, returnIterator: boolean): void => {
    if (ended) return;
    if (begun) {
      options.failed(error);
      finish(returnIterator);
      return;
    }
    ended = true;
    timer?.cancel();
    signal?.removeEventListener("abort", leave);
    if (returnIterator) returning(returned(iterator, options.failed));
    options.ended?.();
    rejectBegun(error);
  };
  function step(): Promise<void> {
    if (ended) return Promise.resolve();
    return inflight ??= pull();
  }
  async function pull(): Promise<void> {
    let result: IteratorResult<unknown>;
    try {
      result = await iterator.next();
    } catch (error) {
      inflight = undefined;
      return fail(error, false);
    }
    inflight = undefined;
    if (ended) return;
    let frame: string | undefined;
    try {
      frame = nextFrame(result);
    } catch (error) {
      return fail(error, true);
    }
    if (frame === undefined) finish(false);
    else write(frame);
  }
  function leave(): void {
    finish(true);
  }

  if (signal?.aborted) finish(true);
  else {
    signal?.addEventListener("abort", leave, { once: true });
    arm();
    void step();
  }
  return stream;
}

// The frame of an iterator's result; none once it is done. Read inside the caller's catch, not
// bare: an iterator may break the protocol (a result that is no object, a `done` getter that
// throws), and the pull that began the stream has no one to reject to.
function nextFrame(result: IteratorResult<unknown>): string | undefined {
  if (typeof result !== "object" || result === null) {
    throw new TypeError(`the iterator's next() gave ${String(result)}, not a result object`);
  }
  return result.done ? undefined : sseFrame(result.value);
}

/**
 * Calls the iterator's `return()`, without waiting on it (a custom iterator's may never settle):
 * what it throws or rejects with (a `finally` that fails) goes to `failed`. Gives back what
 * settles once `return()` has, for a shutdown to wait on within its bound.
 */
export function returned(
  iterator: AsyncIterator<unknown>,
  failed: (error: unknown) => void,
): Promise<void> {
  try {
    const done = iterator.return?.();
    if (done !== undefined) return Promise.resolve(done).then(() => {}, failed);
  } catch (error) {
    failed(error);
  }
  return Promise.resolve();
}
