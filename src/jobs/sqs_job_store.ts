// Jobs kept in SQS (or a server that speaks its API: ElasticMQ, LocalStack), one queue per Thaw
// queue and `<queue>-dead` for its dead jobs, through the official `@aws-sdk/client-sqs` (loaded
// only when `jobs.store` is `sqs`). What SQS cannot do is said where it is refused or documented:
// no unique keys and no priorities (it has no way to find or order waiting messages), and an
// enqueue is sent at once, never part of a database transaction.
//
// A job's state travels in its message's attributes: the runs counted before this message (a
// retry past SQS's 15-minute delay, or a run given back at close, is a new message), when it is
// due (a delay SQS cannot hold: the message is sent again, each time as late as SQS allows, until
// due), its id, its trace context. A taken message is invisible for a short window, extended
// while its run lasts and up to its lease: a process that died gives its jobs back within that
// window, not a whole lease later.
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type SQSClientConfig,
} from "@aws-sdk/client-sqs";
import { DefinitionError } from "../context/errors.ts";
import type { CheckedEnqueue } from "./enqueue_options.ts";
import type {
  DeadJob,
  Enqueued,
  HandledQueue,
  JobStore,
  StateCount,
  TakenJob,
} from "./job_store.ts";
import type { NextStep } from "./run_outcome.ts";
import { storedError } from "./sql_job_store.ts";
import {
  attributeText,
  jobId,
  MAX_TIME,
  number,
  text,
  textOf,
  thawAttributes,
  type ThawState,
  thawState,
} from "./sqs_attributes.ts";
import { deadQueue, SqsDeadQueues } from "./sqs_dead_queue.ts";
import {
  isAccessDenied,
  isMissingQueue,
  isRefusedMessage,
  isStaleHandle,
  StaleHandle,
} from "./sqs_errors.ts";
import { HeldMessage } from "./sqs_held_message.ts";
import { SqsQueueUrls } from "./sqs_queue_urls.ts";

// SQS's longest delay of a message, in seconds.
const MAX_DELAY_S = 900;
// How long a taken message stays invisible before its run's extension, in seconds, at most: a
// process killed gives its jobs back after this long (a third of its lease, when that is less).
const WINDOW_S = 30;
// SQS keeps a message invisible 12 hours at most from its receive: no lease may be longer.
const MAX_LEASE_MS = 12 * 3_600_000;
// How long a call but a receive may take (a receive: its long poll more), in ms; the SDK tries
// a call that timed out again, twice.
const CALL_TIMEOUT_MS = 5000;
// The largest payload, in UTF-8 bytes: SQS's 256 KiB for a message, less room for the attributes
// (a dead job's error among them).
export const MAX_PAYLOAD_BYTES = 240 * 1024;
// A held message whose run never ended is forgotten this long after its lease.
const FORGET_AFTER_MS = 60_000;

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** How the store reaches SQS. */
export interface SqsSettings {
  /** The service's URL; the region's AWS endpoint when absent. */
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  /** The SDK's default chain (environment, profile, role) when absent. */
  readonly credentials:
    | { readonly accessKeyId: string; readonly secretAccessKey: string }
    | undefined;
  /** How long a receive waits for a message (long polling), in seconds, 0 to 20. */
  readonly waitSeconds: number;
}

/** The jobs of an SQS endpoint, one SQS queue per Thaw queue. */
export class SqsJobStore implements JobStore {
  readonly #client: SQSClient;
  // Receives: their requests wait for the long poll.
  readonly #poller: SQSClient;
  readonly #waitSeconds: number;
  readonly #visible: (queue: string) => void;
  // Queue URLs by name, once asked for; the queues (not `-dead`) are what counts and lists show.
  readonly #urls: SqsQueueUrls;
  readonly #queues = new Set<string>();
  // Each queue's attempts by default (its handler's), as the worker tells `reclaim`.
  readonly #attempts = new Map<string, number>();
  readonly #held = new Map<string, HeldMessage>();
  readonly #dead: SqsDeadQueues;
  // Set by close: a take that ends later holds nothing, so that no extension outlives the store.
  #closed = false;
  readonly where: string;
  readonly ids: RegExp = ID;
  /** A receive gives 10 messages at most. */
  readonly takeLimit: number = 10;

  /** `visible` hears of the queue of each job enqueued here. */
  constructor(settings: SqsSettings, visible: (queue: string) => void) {
    const config = (requestTimeout: number): SQSClientConfig => {
      // A host that takes the connection and never answers fails the call, not the worker.
      const made: SQSClientConfig = {
        requestHandler: {
          connectionTimeout: CALL_TIMEOUT_MS,
          requestTimeout,
          throwOnRequestTimeout: true,
        },
      };
      if (settings.endpoint !== undefined) made.endpoint = settings.endpoint;
      if (settings.region !== undefined) made.region = settings.region;
      if (settings.credentials !== undefined) made.credentials = { ...settings.credentials };
      return made;
    };
    this.#client = new SQSClient(config(CALL_TIMEOUT_MS));
    this.#poller = new SQSClient(config(CALL_TIMEOUT_MS + settings.waitSeconds * 1000));
    this.#waitSeconds = settings.waitSeconds;
    this.#visible = visible;
    this.#urls = new SqsQueueUrls(this.#client);
    this.#dead = new SqsDeadQueues(this.#client, this.#urls);
    this.where = `jobs on SQS (${settings.endpoint ?? `region ${settings.region ?? "default"}`})`;
  }

  /**
   * Checks the queues handled here (a name that is another's dead queue, a lease SQS cannot
   * hold) and makes them known: their counts and dead jobs are listed before any enqueue.
   */
  know(handled: readonly HandledQueue[]): void {
    for (const { queue, timeoutMs, where } of handled) {
      if (queue.endsWith("-dead")) {
        throw new DefinitionError(
          `@JobHandler("${queue}") (${where}): on SQS a queue named "<queue>-dead" holds the dead ` +
            "jobs of <queue>; give this queue another name",
        );
      }
      if (timeoutMs > MAX_LEASE_MS) {
        throw new DefinitionError(
          `@JobHandler("${queue}") (${where}): a timeout of ${timeoutMs} ms is longer than SQS ` +
            "keeps a message invisible (12 hours)",
        );
      }
      this.#queues.add(queue);
    }
  }

  async enqueue(job: CheckedEnqueue, trace: string | undefined): Promise<Enqueued> {
    refuseOnSqs(job);
    const id = crypto.randomUUID();
    const now = Date.now();
    const attributes: Record<string, MessageAttributeValue> = {
      "thaw-id": text(id),
      "thaw-runs": number(0),
      "thaw-enqueued": number(now),
    };
    if (job.attempts !== undefined) attributes["thaw-attempts"] = number(job.attempts);
    if (trace !== undefined) attributes["thaw-trace"] = text(trace);
    try {
      await this.#send(
        await this.#urls.made(job.queue),
        job.payload,
        attributes,
        now + job.delayMs,
      );
    } catch (error) {
      throw this.named(error, `enqueue on queue "${job.queue}"`);
    }
    this.#queues.add(job.queue);
    this.#visible(job.queue);
    return { id, created: true };
  }

  async take(
    queue: string,
    count: number,
    leaseMs: number,
    signal?: AbortSignal,
  ): Promise<TakenJob[]> {
    if (this.#closed) return [];
    this.#forgetEnded();
    const url = await this.#urls.made(queue);
    const window = Math.max(1, Math.min(WINDOW_S, Math.ceil(leaseMs / 3000)));
    let messages: Message[];
    try {
      const answer = await this.#poller.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: Math.min(count, this.takeLimit),
          WaitTimeSeconds: this.#waitSeconds,
          VisibilityTimeout: window,
          MessageAttributeNames: ["All"],
          MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
        }),
        signal === undefined ? {} : { abortSignal: signal },
      );
      messages = answer.Messages ?? [];
    } catch (error) {
      // A close ended the wait: whatever it received comes back after its window.
      if (signal?.aborted === true || this.#closed) return [];
      this.#urls.missing(error);
      throw this.named(error, `take jobs of queue "${queue}"`);
    }
    // Closed meanwhile: what it received comes back after its window, unextended.
    if (this.#closed) return [];
    const taken: TakenJob[] = [];
    const aside: Promise<void>[] = [];
    for (const message of messages) {
      const state = thawState(message);
      const receives = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
      if (typeof state === "string") {
        // Not a job Thaw sent: dead at once, untried, with why.
        const held = this.#heldOf(queue, url, message, { runs: 0 }, window, leaseMs);
        aside.push(this.#putAside(held, () => this.#sendDead(held, receives, state)));
        continue;
      }
      const held = this.#heldOf(queue, url, message, state, window, leaseMs);
      const attempts = held.job.attempts ?? this.#attempts.get(queue) ?? Infinity;
      if (state.due !== undefined && state.due > Date.now() + 1000) {
        // Not due yet: sent again, as late as SQS allows, until it is.
        const due = state.due;
        aside.push(
          this.#putAside(held, () => this.#sendNextOrDead(held, held.job.attempt - 1, due)),
        );
      } else if (held.job.attempt > attempts) {
        // Its runs all ended without an end written (a process killed, a run past its lease):
        // dead, as the SQL store's reclaim makes it.
        const error = `its lease ended ${attempts} time${attempts === 1 ? "" : "s"} without ` +
          "its run's end written";
        aside.push(this.#putAside(held, () => this.#sendDead(held, attempts, error)));
      } else {
        this.#held.set(held.job.lease, held);
        taken.push(held.job);
      }
    }
    // After the taken ones are held: their windows are extended meanwhile. One that fails comes
    // back once its window ended.
    await Promise.allSettled(aside);
    // Closed meanwhile: the close stopped the taken ones' extensions, and they come back after
    // their windows, untried.
    return this.#closed ? [] : taken;
  }

  async finish(job: TakenJob, step: NextStep, error: string | undefined): Promise<boolean> {
    const held = this.#held.get(job.lease);
    // Forgotten long after its lease: another run has it, or had it.
    if (held === undefined) return false;
    if (Date.now() >= held.leaseEnds) {
      // Ran past its lease: its message is another run's to take, whatever it sends now.
      this.#forget(held);
      return false;
    }
    try {
      if (step.state === "waiting" && Math.ceil(step.delayMs / 1000) <= MAX_DELAY_S) {
        // The same message, seen again after the wait: its next receive counts the run. No
        // extension may land after it and cut the wait short.
        await held.pause();
        await this.#onHeld(held, Math.ceil(step.delayMs / 1000));
      } else {
        // Its window extended while the next message is sent: a slow send never lets another
        // run take the job meanwhile. Held still, first: a window that ended unseen (its
        // extensions failed) made the message another's, and sending would double the job.
        if (step.state !== "done") await this.#onHeld(held, held.windowSeconds);
        if (step.state === "waiting") {
          await this.#sendNextOrDead(held, job.attempt, Date.now() + step.delayMs);
        } else if (step.state === "released") {
          await this.#sendNextOrDead(held, job.attempt - 1, Date.now());
        } else if (step.state === "dead") {
          await this.#sendDead(held, job.attempt, error ?? "(none)");
        }
        await held.pause();
        await this.#onHeld(held);
      }
    } catch (failure) {
      if (failure instanceof StaleHandle) {
        this.#forget(held);
        return false;
      }
      held.resume();
      throw this.named(failure, `record the end of job ${job.id}`);
    }
    this.#forget(held);
    return true;
  }

  /** SQS gives a message back once its window ends; the queue's attempts are kept for `take`. */
  reclaim(queue: string, attempts: number): Promise<number> {
    this.#attempts.set(queue, attempts);
    return Promise.resolve(0);
  }

  /** A done job's message is deleted as it finishes: nothing to prune. */
  prune(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Each known queue's messages: `waiting` (visible and delayed), `running` (taken, or waiting
   * out a retry's backoff), `dead` (in `<queue>-dead`). SQS keeps no done jobs, nor their age.
   */
  async counts(): Promise<StateCount[]> {
    const queues = [...this.#queues];
    if (queues.length === 0) {
      // Nothing enqueued or handled yet: the service is asked all the same, for the health; an
      // answer that there is no such queue, or that the role may not see it, is an answer.
      await this.#client.send(new GetQueueUrlCommand({ QueueName: "thaw-health" })).catch(
        (error: unknown) => {
          if (!isMissingQueue(error) && !isAccessDenied(error)) throw error;
        },
      );
      return [];
    }
    const counted = await Promise.all(queues.map(async (queue) => {
      const [own, dead] = await Promise.all([
        this.#attributes(queue),
        this.#attributes(deadQueue(queue)),
      ]);
      return [
        row(
          queue,
          "waiting",
          own.ApproximateNumberOfMessages,
          own.ApproximateNumberOfMessagesDelayed,
        ),
        row(queue, "running", own.ApproximateNumberOfMessagesNotVisible),
        row(
          queue,
          "dead",
          dead.ApproximateNumberOfMessages,
          dead.ApproximateNumberOfMessagesNotVisible,
        ),
      ];
    }));
    return counted.flat();
  }

  /** The dead jobs of each known queue, up to 10 each (a look that leaves them where they are). */
  dead(limit: number): Promise<DeadJob[]> {
    return this.#dead.list([...this.#queues], limit);
  }

  async revive(id: string): Promise<string | undefined> {
    if (!ID.test(id)) return undefined;
    const found = await this.#dead.find([...this.#queues], id);
    if (found === undefined) return undefined;
    const { queue, url, message } = found;
    const attributes = thawAttributes(message);
    for (const name of ["thaw-error", "thaw-died", "thaw-due"]) delete attributes[name];
    attributes["thaw-runs"] = number(0);
    await this.#send(await this.#urls.made(queue), message.Body ?? "", attributes, 0);
    await this.#client.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }),
    );
    this.#visible(queue);
    return queue;
  }

  /** Deletes dead job `id`: SQS cannot find a waiting one without taking it. */
  async remove(id: string): Promise<boolean> {
    if (!ID.test(id)) return false;
    const found = await this.#dead.find([...this.#queues], id);
    if (found === undefined) return false;
    await this.#client.send(
      new DeleteMessageCommand({ QueueUrl: found.url, ReceiptHandle: found.message.ReceiptHandle }),
    );
    return true;
  }

  /** `error` with the endpoint named. */
  named(error: unknown, what: string): Error {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : `${error}`;
    return new Error(`${this.where}: could not ${what}: ${message}`, { cause: error });
  }

  /** Stops extending the windows of the runs still held, and closes the clients' sockets. */
  close(): void {
    this.#closed = true;
    for (const held of this.#held.values()) this.#forget(held);
    this.#client.destroy();
    this.#poller.destroy();
  }

  #heldOf(
    queue: string,
    url: string,
    message: Message,
    state: Partial<ThawState>,
    window: number,
    leaseMs: number,
  ): HeldMessage {
    const enqueuedAt = state.enqueued ?? Number(message.Attributes?.SentTimestamp ?? Date.now());
    const receives = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    const job: TakenJob = {
      id: jobId(message),
      queue,
      payload: message.Body ?? "",
      attempt: (state.runs ?? 0) + receives,
      attempts: state.attempts,
      enqueuedAt: new Date(enqueuedAt),
      trace: textOf(message, "thaw-trace"),
      lease: message.ReceiptHandle ?? crypto.randomUUID(),
    };
    return new HeldMessage(this.#client, { url, message, job }, window, leaseMs);
  }

  // Sends what becomes of a message not run (`next`), then deletes it; its window extended
  // meanwhile.
  async #putAside(held: HeldMessage, next: () => Promise<void>): Promise<void> {
    try {
      await next();
      await held.pause();
      await this.#onHeld(held);
    } finally {
      held.stop();
    }
  }

  #forget(held: HeldMessage): void {
    held.stop();
    this.#held.delete(held.job.lease);
  }

  // A run that never ended (a handler that ignores its signal) is forgotten, its extension long
  // stopped, a while after its lease.
  #forgetEnded(): void {
    for (const held of this.#held.values()) {
      if (Date.now() - held.leaseEnds > FORGET_AFTER_MS) {
        this.#forget(held);
      }
    }
  }

  // Deletes the held message, or with `visibility` (s) makes it visible again then; a receipt
  // handle no longer held is a StaleHandle.
  async #onHeld(held: HeldMessage, visibility?: number): Promise<void> {
    const target = { QueueUrl: held.url, ReceiptHandle: held.message.ReceiptHandle };
    try {
      await (visibility === undefined
        ? this.#client.send(new DeleteMessageCommand(target))
        : this.#client.send(
          new ChangeMessageVisibilityCommand({ ...target, VisibilityTimeout: visibility }),
        ));
    } catch (error) {
      if (isStaleHandle(error)) throw new StaleHandle(held.job.id, { cause: error });
      throw error;
    }
  }

  // Sends the job's next message to its queue, counting `runs`, due at `due`, once however often
  // its end is tried.
  async #sendNext(held: HeldMessage, runs: number, due: number): Promise<void> {
    if (held.sent) return;
    const attributes = thawAttributes(held.message);
    attributes["thaw-id"] = text(held.job.id);
    attributes["thaw-runs"] = number(runs);
    attributes["thaw-enqueued"] = number(held.job.enqueuedAt.getTime());
    await this.#send(held.url, held.job.payload, attributes, due);
    held.sent = true;
  }

  // Sends the job's next message, or, when SQS refuses it (too many attributes of another
  // sender's, a body with no room left), sends it to dead: a job that cannot be sent again would
  // otherwise come back after every window, for ever.
  async #sendNextOrDead(held: HeldMessage, runs: number, due: number): Promise<void> {
    try {
      await this.#sendNext(held, runs, due);
    } catch (error) {
      if (!isRefusedMessage(error)) throw error;
      const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      await this.#sendDead(
        held,
        held.job.attempt,
        `its next message could not be sent again: ${why}`,
      );
    }
  }

  // Sends the job to its dead queue with its runs and last error, once. Refused (a message that
  // with the error is over SQS's size), it is sent with the error cut short and nothing else:
  // a job that cannot die would run for ever.
  async #sendDead(held: HeldMessage, runs: number, error: string): Promise<void> {
    if (held.sent) return;
    const url = await this.#urls.made(deadQueue(held.job.queue));
    const attributes = thawAttributes(held.message);
    delete attributes["thaw-due"];
    Object.assign(attributes, {
      "thaw-id": text(held.job.id),
      "thaw-runs": number(runs),
      "thaw-enqueued": number(held.job.enqueuedAt.getTime()),
      "thaw-error": text(attributeText(storedError(error)) || "(none)"),
      "thaw-died": number(Date.now()),
    });
    try {
      await this.#send(url, held.job.payload, attributes, 0);
    } catch (refused) {
      if (!isRefusedMessage(refused)) throw refused;
      await this.#send(url, held.job.payload, {
        "thaw-id": text(held.job.id),
        "thaw-runs": number(runs),
        "thaw-error": text(attributeText(storedError(error.slice(0, 200))) || "(none)"),
        "thaw-died": number(Date.now()),
      }, 0);
    }
    held.sent = true;
  }

  async #send(
    url: string,
    body: string,
    attributes: Record<string, MessageAttributeValue>,
    due: number,
  ): Promise<void> {
    const seconds = Math.max(0, Math.ceil((due - Date.now()) / 1000));
    const kept = { ...attributes };
    delete kept["thaw-due"];
    if (seconds > MAX_DELAY_S) kept["thaw-due"] = number(due);
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: body,
        DelaySeconds: Math.min(seconds, MAX_DELAY_S),
        MessageAttributes: kept,
      }),
    ).catch((error: unknown) => {
      this.#urls.missing(error);
      throw error;
    });
  }

  // The queue's message counts; none when it does not exist (a read makes no queue).
  async #attributes(queue: string): Promise<Record<string, string>> {
    const url = await this.#urls.existing(queue);
    if (url === undefined) return {};
    try {
      const answer = await this.#client.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
          ],
        }),
      );
      return answer.Attributes ?? {};
    } catch (error) {
      // Deleted since its URL was kept.
      if (this.#urls.missing(error)) return {};
      throw error;
    }
  }
}

// What SQS cannot do, refused before anything is sent.
function refuseOnSqs(job: CheckedEnqueue): void {
  const refuse = (why: string) => {
    throw new TypeError(`queue "${job.queue}": ${why}`);
  };
  if (job.key !== undefined) {
    refuse("a unique key needs a store that can look at its waiting jobs (jobs.store: datasource)");
  }
  if (job.priority !== 0) {
    refuse("a priority needs a store that orders its waiting jobs (jobs.store: datasource)");
  }
  if (job.queue.endsWith("-dead")) {
    refuse('on SQS a queue named "<queue>-dead" holds the dead jobs of <queue>');
  }
  if (Date.now() + job.delayMs > MAX_TIME) {
    refuse(`a delay of ${job.delayMs} ms ends past the latest date a job can be due`);
  }
  const bytes = new TextEncoder().encode(job.payload).length;
  if (bytes > MAX_PAYLOAD_BYTES) {
    refuse(`a payload of ${bytes} bytes is over the ${MAX_PAYLOAD_BYTES} an SQS job may hold`);
  }
}

function row(
  queue: string,
  state: StateCount["state"],
  ...values: (string | undefined)[]
): StateCount {
  const jobs = values.reduce((sum, value) => sum + (Number(value ?? 0) || 0), 0);
  return { queue, state, jobs, dueForMs: undefined };
}
