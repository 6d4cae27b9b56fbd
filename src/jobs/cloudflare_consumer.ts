// The consumer side of jobs on Cloudflare Queues: the app's `queue(batch, env)` export hands each
// batch here, and each message is run by its queue's `@JobHandler`, `concurrency` at a time, then
// acknowledged (done), retried after the backoff (failed, with runs left), or given to the dead
// queue. The queue service keeps the message until then: a run the worker does not finish (its
// isolate ended) is delivered again, as a job whose lease ran out is taken again.
import type { ContextLogger } from "../context/class_record.ts";
import type { MessageBatch, QueueMessage } from "../edge_events.ts";
import {
  againBodyOf,
  deadBodyOf,
  delayOf,
  MAX_DELAY_S,
  type ReadJob,
  readJob,
} from "./cloudflare_message.ts";
import type { CloudflareQueues } from "./cloudflare_queues.ts";
import type { FoundHandler } from "./job_handler.ts";
import { runJob, type RunResult } from "./job_run.ts";
import type { JobsTelemetry } from "./jobs_telemetry.ts";
import { nextStep } from "./run_outcome.ts";

/** What the consumer is given beside its handlers and queues. */
export interface ConsumerSettings {
  readonly logger: ContextLogger;
  readonly telemetry?: JobsTelemetry | undefined;
}

/** Runs the batches an edge runtime delivers, with the app's handlers. */
export class CloudflareConsumer {
  readonly #handlers: ReadonlyMap<string, FoundHandler>;
  readonly #queues: CloudflareQueues;
  readonly #settings: ConsumerSettings;
  // The runs in progress, whose signals a close aborts.
  readonly #running = new Set<AbortController>();
  // The batches in progress, which a close waits for.
  readonly #batches = new Set<Promise<void>>();
  #closing = false;

  constructor(
    handlers: readonly FoundHandler[],
    queues: CloudflareQueues,
    settings: ConsumerSettings,
  ) {
    this.#handlers = new Map(handlers.map((handler) => [handler.queue, handler]));
    this.#queues = queues;
    this.#settings = settings;
  }

  /**
   * Runs `batch`'s messages with its queue's handler, and resolves once each was acknowledged or
   * retried. Rejects, acknowledging none, when no handler runs the queue or the app is closing:
   * the runtime then delivers them again.
   */
  consume(batch: MessageBatch): Promise<void> {
    const handler = this.#handlers.get(batch.queue);
    if (handler === undefined) {
      const handled = [...this.#handlers.keys()].map((queue) => JSON.stringify(queue));
      return Promise.reject(
        new Error(
          `jobs on Cloudflare Queues: a batch of queue ${JSON.stringify(batch.queue)} came, and ` +
            `no @JobHandler runs that queue (the handled queues: ${
              handled.join(", ") || "none"
            }); its messages are delivered again`,
        ),
      );
    }
    if (this.#closing) {
      return Promise.reject(
        new Error(
          `jobs on Cloudflare Queues: the app is closing; the batch of queue "${batch.queue}" ` +
            "is delivered again",
        ),
      );
    }
    const done = this.#consume(handler, batch.messages);
    this.#batches.add(done);
    return done.finally(() => this.#batches.delete(done));
  }

  /**
   * Takes no more batches and aborts the signals of the runs in progress; resolves once the
   * batches under way ended, or `timeoutMs` passed. A run the close ended is sent again as a new
   * message, the run not counted.
   */
  async close(timeoutMs: number): Promise<void> {
    this.#closing = true;
    for (const controller of this.#running) {
      controller.abort(new Error("the app is closing: the job's message is delivered again"));
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled(this.#batches),
      new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs)),
    ]);
    clearTimeout(timer);
  }

  async #consume(handler: FoundHandler, messages: readonly QueueMessage[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < messages.length) await this.#settle(handler, messages[next++]);
    };
    const lanes = Math.min(handler.settings.concurrency, messages.length);
    await Promise.all(Array.from({ length: lanes }, lane));
  }

  // Runs one message's job, and acknowledges or retries the message. A send that fails (to the
  // dead queue, a due time's next leg) retries the message after a growing wait, so that an
  // outage of the queue spends few of its `max_retries`.
  async #settle(handler: FoundHandler, message: QueueMessage): Promise<void> {
    const { queue, where } = handler;
    const { logger, telemetry } = this.#settings;
    const read = readJob(queue, message);
    const { job } = read;
    let result: RunResult | undefined;
    let dead = false;
    try {
      const now = Date.now();
      if (read.due !== undefined && read.due > now) {
        // Past the longest delay a message has: sent again for the rest of the wait, untried.
        await this.#queues.send(queue, { body: message.body, ...delayOf(read.due - now, now) });
        message.ack();
        return;
      }
      const attempts = job.attempts ?? handler.settings.attempts;
      if (job.attempt > attempts) {
        // Delivered again after its last run, whose end was not recorded (the worker ended, or
        // its dead message could not be sent): it is not run again.
        await this.#bury(handler, message, read, attempts, USED_UP);
        return;
      }
      const controller = new AbortController();
      this.#running.add(controller);
      try {
        result = await runJob(handler, job, {
          controller,
          telemetry,
          closing: () => this.#closing,
          leaveAtAbort: true,
          refused: read.refused,
        });
      } finally {
        this.#running.delete(controller);
      }
      const step = nextStep(result.end, job.attempt, attempts, handler.settings.backoff);
      switch (step.state) {
        case "done":
          message.ack();
          break;
        case "waiting":
          message.retry({ delaySeconds: Math.min(MAX_DELAY_S, Math.ceil(step.delayMs / 1000)) });
          break;
        case "released":
          // The queue counts deliveries: sent again with the runs it had, this one not counted.
          await this.#queues.send(queue, { body: againBodyOf(read), delaySeconds: 0 });
          message.ack();
          break;
        case "dead":
          logger.error(
            `@JobHandler("${queue}") (${where}): job ${job.id} is dead after run ` +
              `${job.attempt}: ${result.error}`,
          );
          await this.#bury(handler, message, read, job.attempt, result.error);
          dead = true;
      }
    } catch (failure) {
      logger.error(
        `@JobHandler("${queue}") (${where}): job ${job.id}: its message could not be settled; ` +
          "it is delivered again",
        failure,
      );
      message.retry({ delaySeconds: SEND_BACKOFF_S(message.attempts) });
    } finally {
      result?.observed?.end(result.end, dead, result.thrown);
    }
  }

  // A dead job goes to the dead queue's producer binding (`<queue>-dead`) with its `runs` and last
  // error. Without one, the message is retried, never run again: the queue's own `max_retries`
  // and `dead_letter_queue` decide where it goes.
  async #bury(
    handler: FoundHandler,
    message: QueueMessage,
    read: ReadJob,
    runs: number,
    error: string | undefined,
  ): Promise<void> {
    const dead = `${handler.queue}-dead`;
    if (!this.#queues.has(dead)) {
      (this.#settings.logger.warn ?? this.#settings.logger.error).call(
        this.#settings.logger,
        `@JobHandler("${handler.queue}") (${handler.where}): job ${read.job.id} has no dead ` +
          `queue to go to (no producer binding for "${dead}"): its message is left to the ` +
          "queue's max_retries and dead_letter_queue, and is not run again",
      );
      message.retry();
      return;
    }
    await this.#queues.send(dead, { body: deadBodyOf(read, runs, error), delaySeconds: 0 });
    message.ack();
  }
}

// The error a job delivered past its attempts is buried with.
const USED_UP = "its runs were used up: the end of its last was not recorded (the worker ended " +
  "mid-run, or its dead message could not be sent)";

// The wait before a message whose send failed is delivered again: 10 s, doubling, at most an hour.
const SEND_BACKOFF_S = (delivery: number): number =>
  Math.min(3600, 10 * 2 ** Math.min(9, Math.max(0, delivery - 1)));
