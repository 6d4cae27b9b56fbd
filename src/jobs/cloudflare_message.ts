// A job as a Cloudflare Queues message, both ways: the body `enqueue` sends (the payload in an
// envelope that keeps what the queue does not: the job's id, its attempts, the trace of its
// enqueue, a due time past the longest delay a message can be given, and the runs it had before a
// message Thaw sent again), and the job a consumer reads back from a message, Thaw's or any other
// producer's. Pure: the clock is given.
import { jsonOf } from "./enqueue_options.ts";
import type { TakenJob } from "./job_store.ts";

/** The longest delay Cloudflare Queues gives a message (`delaySeconds`): 12 hours, in seconds. */
export const MAX_DELAY_S = 43_200;

/**
 * The most bytes of JSON Thaw sends in one message: Cloudflare Queues takes 128 KB (128,000
 * bytes), its own metadata (about 100 bytes) counted in.
 */
export const MAX_MESSAGE_BYTES = 127_900;

/**
 * The largest job an enqueue takes, envelope and payload as JSON: what a message holds, less room
 * for what Thaw adds to a job's message when it sends it again or to its dead queue.
 */
export const MAX_JOB_BYTES = 127_000;

// The latest time a `Date` holds, in ms since the epoch: a job due later could never be due.
const MAX_TIME = 8.64e15;

/** What Thaw keeps of a job beside its payload, in the body of its message. */
export interface JobEnvelope {
  readonly thaw: {
    /** The id `enqueue` answered. */
    readonly id: string;
    /** When it was enqueued, in ms since the epoch. */
    readonly enqueuedAt: number;
    /** How many runs it was enqueued with, when not its handler's. */
    readonly attempts?: number;
    /** The trace context of the enqueue (a `traceparent`). */
    readonly trace?: string;
    /** When it is due, in ms since the epoch, for a delay past {@linkcode MAX_DELAY_S}. */
    readonly due?: number;
    /**
     * The runs it had before this message: Thaw sent it again after a delivery that did not run
     * it (the queue counts deliveries, not runs).
     */
    readonly tried?: number;
    /** In a dead queue: how many runs it had, and its last run's error. */
    readonly runs?: number;
    readonly error?: string;
  };
  readonly payload: unknown;
}

/** A message body to send (Thaw's envelope, or a body received, sent again), and its delay. */
export interface Outgoing {
  readonly body: unknown;
  /** Whole seconds, at most {@linkcode MAX_DELAY_S}; 0: deliverable at once. */
  readonly delaySeconds: number;
}

/** A message as a consumer is given it (Cloudflare's `Message`), what is read of it. */
export interface IncomingMessage {
  readonly id: string;
  readonly timestamp: Date;
  readonly body: unknown;
  readonly attempts: number;
}

/** A job read from a message: the job, or why no run would take it, and when it is due. */
export interface ReadJob {
  readonly job: TakenJob;
  /** Its envelope's due time, when it has one (ms since the epoch). */
  readonly due: number | undefined;
  /** Why its body cannot be run: it is not JSON. */
  readonly refused: string | undefined;
}

// What an id in an envelope may be: Thaw's are UUIDs; anything else is not taken as one, since an
// id reaches logs and spans.
const ID = /^[A-Za-z0-9_-]{1,128}$/;
// A W3C `traceparent`: anything else is not handed to the trace propagator.
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The delay of a message due in `delayMs`, and the due time its envelope keeps past 12 hours. */
export function delayOf(delayMs: number, now: number): { delaySeconds: number; due?: number } {
  const seconds = Math.max(0, Math.ceil(delayMs / 1000));
  return seconds <= MAX_DELAY_S ? { delaySeconds: seconds } : {
    delaySeconds: MAX_DELAY_S,
    due: now + delayMs,
  };
}

/**
 * The message of a job enqueued `now` with `payload` (JSON text) and `delayMs`. Throws a
 * `TypeError` naming `where` when its body is over {@linkcode MAX_JOB_BYTES}, or its delay ends
 * past the latest date a `Date` holds.
 */
export function outgoingOf(
  job: {
    readonly payload: string;
    readonly delayMs: number;
    readonly attempts: number | undefined;
  },
  id: string,
  trace: string | undefined,
  now: number,
  where: string,
): Outgoing {
  if (now + job.delayMs > MAX_TIME) {
    throw new TypeError(
      `${where}: a delay of ${job.delayMs} ms ends past the latest date a job can be due`,
    );
  }
  const { delaySeconds, due } = delayOf(job.delayMs, now);
  const body: JobEnvelope = {
    thaw: {
      id,
      enqueuedAt: now,
      ...job.attempts === undefined ? {} : { attempts: job.attempts },
      ...trace === undefined ? {} : { trace },
      ...due === undefined ? {} : { due },
    },
    payload: JSON.parse(job.payload),
  };
  const bytes = sizeOf(body);
  if (bytes > MAX_JOB_BYTES) {
    throw new TypeError(
      `${where}: a job of ${bytes} bytes (payload and envelope, as JSON) is over the ` +
        `${MAX_JOB_BYTES} a job on Cloudflare Queues may take (a message holds 128 KB)`,
    );
  }
  return { body, delaySeconds };
}

/**
 * The job of `message`, received on `queue`. A body in Thaw's envelope gives its id, attempts,
 * trace and due time; any other body (another producer's) is the payload itself, the message's
 * id and timestamp the job's. The attempt is the runs the envelope says it had before this
 * message, and the message's deliveries.
 */
export function readJob(queue: string, message: IncomingMessage): ReadJob {
  const envelope = envelopeOf(message.body);
  const thaw = envelope?.thaw;
  const id = typeof thaw?.id === "string" && ID.test(thaw.id) ? thaw.id : message.id;
  const enqueuedAt = isTime(thaw?.enqueuedAt) ? new Date(thaw.enqueuedAt) : message.timestamp;
  const attempts = isCount(thaw?.attempts) && thaw.attempts >= 1 ? thaw.attempts : undefined;
  const tried = isCount(thaw?.tried) ? thaw.tried : 0;
  const trace = typeof thaw?.trace === "string" && TRACEPARENT.test(thaw.trace)
    ? thaw.trace
    : undefined;
  const due = isTime(thaw?.due) ? thaw.due : undefined;
  let payload = "null";
  let refused: string | undefined;
  try {
    payload = jsonOf(envelope === undefined ? message.body : envelope.payload, "the message");
  } catch (error) {
    refused = `its body is not JSON (${(error as Error).message})`;
  }
  return {
    job: {
      id,
      queue,
      payload,
      attempt: tried + Math.max(1, message.attempts),
      attempts,
      enqueuedAt,
      trace,
      lease: message.id,
    },
    due,
    refused,
  };
}

/**
 * The body of a job's message sent again after a delivery that did not run it (the app closed
 * under the run): its envelope (one made for another producer's body), holding the runs it had.
 */
export function againBodyOf(read: ReadJob): JobEnvelope {
  const { job } = read;
  return {
    thaw: { ...kept(read), ...job.attempt > 1 ? { tried: job.attempt - 1 } : {} },
    payload: JSON.parse(job.payload),
  };
}

/**
 * The body of a dead job's message: its envelope with the `runs` it had and its last error,
 * shortened so that the message stays within {@linkcode MAX_MESSAGE_BYTES}; a payload too large to
 * go with any of it (another producer's body near the limit) is left out, the error saying so.
 */
export function deadBodyOf(read: ReadJob, runs: number, error: string | undefined): JobEnvelope {
  const thaw = { ...kept(read), runs };
  const payload = read.refused === undefined ? JSON.parse(read.job.payload) : null;
  const bare = sizeOf({ thaw, payload });
  if (bare > MAX_MESSAGE_BYTES - 64) {
    const dropped = `its payload (${bare} bytes with the envelope) was too large to keep here`;
    return {
      thaw: {
        ...thaw,
        error: error === undefined ? dropped : `${dropped}; ${fitted(error, 1000)}`,
      },
      payload: null,
    };
  }
  if (error === undefined) return { thaw, payload };
  // `,"error":""` and the error's characters, each at most 6 bytes (`\u0000`) in JSON.
  const room = Math.floor((MAX_MESSAGE_BYTES - bare - 12) / 6);
  return room > 0 ? { thaw: { ...thaw, error: fitted(error, room) }, payload } : { thaw, payload };
}

// What an envelope keeps of a job read from a message.
function kept(read: ReadJob): {
  id: string;
  enqueuedAt: number;
  attempts?: number;
  trace?: string;
  due?: number;
} {
  const { job } = read;
  return {
    id: job.id,
    enqueuedAt: job.enqueuedAt.getTime(),
    ...job.attempts === undefined ? {} : { attempts: job.attempts },
    ...job.trace === undefined ? {} : { trace: job.trace },
    ...read.due === undefined ? {} : { due: read.due },
  };
}

// `text`, cut to `length` characters at most.
const fitted = (text: string, length: number) =>
  text.length <= length ? text : text.slice(0, length);

// A time a `Date` holds, in ms since the epoch.
const isTime = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX_TIME;

// A count of runs as the databases' integers hold them.
const isCount = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 2 ** 31 - 1;

// The envelope in `body`, when it is one of Thaw's: an object holding `thaw` (an object) and
// `payload`, and nothing else but what a dead queue's adds.
function envelopeOf(body: unknown): JobEnvelope | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const keys = Object.keys(body);
  if (keys.length !== 2 || !keys.includes("thaw") || !keys.includes("payload")) return undefined;
  const { thaw } = body as { thaw: unknown };
  if (typeof thaw !== "object" || thaw === null || Array.isArray(thaw)) return undefined;
  return body as JobEnvelope;
}

/** The bytes of `body` as JSON, as the queue counts them. */
export function sizeOf(body: unknown): number {
  return new TextEncoder().encode(JSON.stringify(body)).length;
}
