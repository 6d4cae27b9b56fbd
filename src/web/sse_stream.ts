// The body of an `@SseMapping` answer: the events of an async iterator, pulled one at a time as
// the server takes them, so that a slow client holds back the iterator (backpressure) rather than
// letting frames pile up in memory. Nothing is committed until the first event or heartbeat: an
// error before it is still an ordinary error answer; one after it can only end the stream.
import type { Clock, Timer } from "../runtime/clock.ts";
import { HEARTBEAT, sseFrame } from "./sse_frame.ts";
import { Deferred } from "../runtime/deferred.ts";
import { type CallContext, callContext } from "./call_context.ts";

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
  return new EventStreamRun(iterator, options).open();
}

// One event stream as it runs: its state is written only by its own methods, the body's pulls
// and cancel, the heartbeat's timer and the client's signal calling in.
class EventStreamRun {
  readonly #iterator: AsyncIterator<unknown>;
  readonly #options: EventStreamOptions;
  readonly #returning: (done: Promise<void>) => void;
  readonly #begins = new Deferred<StreamStart>();
  readonly #sent = { messages: 0, bytes: 0 };
  readonly #body: ReadableStream<Uint8Array>;
  // Set by the body's `start`, which runs as the body is made.
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #begun = false;
  #ended = false;
  // The iterator's `next()` in progress, whoever asked for it (the first wait, or a pull).
  #inflight: Promise<void> | undefined;
  #timer: Timer | undefined;
  // The request's own (its caller), for the pulls the server makes once the handler returned.
  readonly #within: CallContext = callContext();

  constructor(iterator: AsyncIterator<unknown>, options: EventStreamOptions) {
    this.#iterator = iterator;
    this.#options = options;
    this.#returning = options.returning ?? ignore;
    this.#body = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.#controller = c;
      },
      pull: () => this.#step(),
      cancel: () => this.#finish(true),
    }, { highWaterMark: 0 });
  }

  // The stream, its first event asked for (unless the client has left already).
  open(): EventStream {
    const signal = this.#options.signal;
    const stream: EventStream = {
      body: this.#body,
      begun: this.#begins.promise,
      end: () => this.#finish(true),
      sent: this.#sent,
    };
    if (signal?.aborted) this.#finish(true);
    else {
      signal?.addEventListener("abort", this.#leave, { once: true });
      this.#arm();
      void this.#step();
    }
    return stream;
  }

  // Once begun, the server cancels the body when the client leaves; the signal is only read
  // until then (Deno also aborts it once an answer has gone, and warns of that to whoever listens).
  #begin(start: StreamStart): void {
    if (this.#begun) return;
    this.#begun = true;
    this.#options.signal?.removeEventListener("abort", this.#leave);
    this.#begins.resolve(start);
  }

  #arm(): void {
    const { heartbeatMs, clock } = this.#options;
    this.#timer?.cancel();
    // Held: an open stream is the app's work, as a schedule is.
    this.#timer = heartbeatMs > 0
      ? clock.after(heartbeatMs, this.#beat, { keepAlive: true })
      : undefined;
  }

  #write(text: string): void {
    const bytes = encoder.encode(text);
    this.#controller?.enqueue(bytes);
    this.#sent.bytes += bytes.byteLength;
    if (text !== HEARTBEAT) this.#sent.messages++;
    this.#begin("begun");
    this.#arm();
  }

  // Silence: only while the iterator keeps the server waiting, and with no frame queued (a client
  // that reads nothing gets no more than one).
  readonly #beat = (): void => {
    this.#timer = undefined;
    if (this.#ended) return;
    if (this.#inflight !== undefined && (this.#controller?.desiredSize ?? 0) >= 0) {
      this.#write(HEARTBEAT);
    } else this.#arm();
  };

  // The client left before the stream began.
  readonly #leave = (): void => this.#finish(true);

  #finish(returnIterator: boolean): void {
    if (this.#ended) return;
    this.#stop();
    try {
      this.#controller?.close();
    } catch {
      // Cancelled by the server: closed already.
    }
    this.#begin(returnIterator ? "ended" : "done"); // Returned: ended from outside, not done.
    this.#afterEnd(returnIterator);
  }

  #fail(error: unknown, returnIterator: boolean): void {
    if (this.#ended) return;
    if (this.#begun) {
      this.#options.failed(error);
      this.#finish(returnIterator);
      return;
    }
    this.#stop();
    this.#afterEnd(returnIterator);
    this.#begins.reject(error);
  }

  // No more frames, no more heartbeats, and the signal no longer heard.
  #stop(): void {
    this.#ended = true;
    this.#timer?.cancel();
    this.#options.signal?.removeEventListener("abort", this.#leave);
  }

  // What follows the end: the iterator returned where it is not done, and the owner told.
  #afterEnd(returnIterator: boolean): void {
    if (returnIterator) {
      this.#returning(this.#within(() => returned(this.#iterator, this.#options.failed)));
    }
    this.#options.ended?.();
  }

  #step(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return this.#inflight ??= this.#pull();
  }

  async #pull(): Promise<void> {
    let result: IteratorResult<unknown>;
    try {
      result = await this.#within(() => this.#iterator.next());
    } catch (error) {
      this.#inflight = undefined;
      return this.#fail(error, false);
    }
    this.#inflight = undefined;
    if (this.#ended) return;
    let frame: string | undefined;
    try {
      frame = nextFrame(result);
    } catch (error) {
      return this.#fail(error, true);
    }
    if (frame === undefined) this.#finish(false);
    else this.#write(frame);
  }
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
