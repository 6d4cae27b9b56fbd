// What an edge runtime (Cloudflare Workers, workerd) passes to a worker's handlers, as Thaw reads
// it: types alone, shared by the app's handlers and the features that add to them.

/** What edge runtimes (Cloudflare Workers, workerd) pass as a fetch handler's third argument. */
export interface ExecutionContext {
  /** Keeps the worker alive until the promise settles. */
  waitUntil(promise: Promise<unknown>): void;
  /** Lets the runtime forward the request to the origin if the handler throws. */
  passThroughOnException(): void;
  /** Values the worker's binding passes along (Wrangler 4). */
  props?: unknown;
}

/**
 * What an edge runtime passes to a cron trigger's handler (Cloudflare's `ScheduledController`):
 * the trigger's expression, and when it was due.
 */
export interface ScheduledController {
  /** The trigger's cron expression, as configured (`wrangler.toml`'s `[triggers] crons`). */
  readonly cron: string;
  /** When the trigger was due, in milliseconds since the epoch. */
  readonly scheduledTime?: number;
}

/** How a message is given back to its queue: after `delaySeconds` (the queue's own delay if absent). */
export interface QueueRetryOptions {
  /** Seconds before it is delivered again, at most 43,200 (12 hours). */
  readonly delaySeconds?: number;
}

/** A message of a batch (Cloudflare's `Message`). */
export interface QueueMessage {
  /** The queue's id of the message. */
  readonly id: string;
  /** When it was sent. */
  readonly timestamp: Date;
  /** Its body, as its content type reads it (JSON, text, bytes or a V8-serialized value). */
  readonly body: unknown;
  /** How many times it was delivered, this one included: 1 the first time. */
  readonly attempts: number;
  /** Done: it is not delivered again. */
  ack(): void;
  /** Delivered again, after `options.delaySeconds`. */
  retry(options?: QueueRetryOptions): void;
}

/** What an edge runtime passes to a queue consumer (Cloudflare's `MessageBatch`). */
export interface MessageBatch {
  /** The name of the queue the messages come from. */
  readonly queue: string;
  /** The messages, ten at most by default (the consumer's `max_batch_size`). */
  readonly messages: readonly QueueMessage[];
  /** Every message is done. */
  ackAll(): void;
  /** Every message is delivered again. */
  retryAll(options?: QueueRetryOptions): void;
}

/**
 * The handlers of an app that a runtime calls (`export default app`, `Deno.serve(app.fetch)`):
 * what a feature may add to or wrap, given the app's own.
 */
export interface EdgeHandlers {
  /**
   * Answers a request, synchronously when the handler does (`await` it either way). Bound, so
   * `Deno.serve(app.fetch)` works, and shaped as the edge runtimes
   * expect, so `export default app` serves on Deno Deploy, Bun and Cloudflare Workers.
   */
  readonly fetch: (
    request: Request,
    env?: unknown,
    ctx?: ExecutionContext,
  ) => Response | Promise<Response>;
  /**
   * Cloudflare Workers' handler of cron triggers (`export default app` passes it on, as does
   * `export default { fetch: app.fetch, scheduled: app.scheduled }`): runs, once each, the
   * `@Scheduled` cron jobs whose expression is the trigger's, and resolves when they end. A run
   * that throws is logged, then rejects the call with its error (an `AggregateError` when several
   * did), so that the runtime reports the run as failed. In an app with jobs, a trigger none of
   * them matches is logged.
   */
  readonly scheduled: (
    controller: ScheduledController,
    env?: unknown,
    ctx?: ExecutionContext,
  ) => Promise<void>;
  /**
   * Cloudflare Workers' queue consumer, in an app whose jobs are on Cloudflare Queues
   * (`jobs.store: cloudflare`; absent otherwise). `export default app` passes it on, as does
   * `export default { fetch: app.fetch, queue: app.queue }`. Runs each message with its queue's
   * `@JobHandler`, and resolves once each was acknowledged or retried; rejects when no handler
   * runs the batch's queue, whose messages are then delivered again.
   */
  readonly queue?: (batch: MessageBatch, env?: unknown, ctx?: ExecutionContext) => Promise<void>;
}
