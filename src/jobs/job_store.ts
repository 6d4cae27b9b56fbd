// The one narrow interface between the job queue and where its jobs are kept (a datasource's table,
// SQS): the queue and its workers know nothing else of a store. A queue service that delivers the
// jobs itself (Cloudflare Queues) is only sent to.
import type { CheckedEnqueue } from "./enqueue_options.ts";
import type { NextStep } from "./run_outcome.ts";

/** A job a worker took: its lease is held until it finishes or the lease ends. */
export interface TakenJob {
  readonly id: string;
  readonly queue: string;
  /** The payload as JSON text. */
  readonly payload: string;
  /** This run's number, from 1. */
  readonly attempt: number;
  /** How many runs it was enqueued with, when not its handler's. */
  readonly attempts: number | undefined;
  readonly enqueuedAt: Date;
  /** The trace context of the enqueue (a `traceparent`), when one was stored. */
  readonly trace: string | undefined;
  /** What proves this worker holds the job: a later take's lease is another. */
  readonly lease: string;
}

/** An enqueue's answer. */
export interface Enqueued {
  /** The job's id. */
  readonly id: string;
  /** `false` when a waiting or running job of the queue held the key: `id` is that job's. */
  readonly created: boolean;
}

/** How many jobs of one queue are in one state. */
export interface StateCount {
  readonly queue: string;
  readonly state: "waiting" | "running" | "done" | "dead";
  readonly jobs: number;
  /** For the waiting ones: how long the earliest due has been due, in ms (0 if none is due). */
  readonly dueForMs: number | undefined;
}

/** Where `JobQueue.enqueue` writes: a store, or a queue service's producer. */
export interface JobSender {
  /**
   * Writes a job; inside a transaction of the store's datasource, as part of it. Once the job can
   * be taken (at once, or at that transaction's commit), the store's listener hears of its queue.
   */
  enqueue(job: CheckedEnqueue, trace: string | undefined): Promise<Enqueued>;
}

/** Where jobs are kept. */
export interface JobStore extends JobSender {
  /**
   * Takes up to `count` due jobs of `queue` for `leaseMs`, the highest priority, then earliest
   * due, first. A store that waits for jobs to come (SQS's long polling) resolves none once
   * `signal` aborts.
   */
  take(queue: string, count: number, leaseMs: number, signal?: AbortSignal): Promise<TakenJob[]>;
  /** Applies `step` to `job`; `false` when its lease was lost (another worker has it, or had it). */
  finish(job: TakenJob, step: NextStep, error: string | undefined): Promise<boolean>;
  /**
   * Puts the running jobs of `queue` whose lease ended back to waiting (dead when that run was
   * their last of `attempts`); resolves how many.
   */
  reclaim(queue: string, attempts: number): Promise<number>;
  /** Deletes the done jobs finished more than `retentionMs` ago. */
  prune(retentionMs: number): Promise<void>;
  /** How many jobs, per queue and state. */
  counts(): Promise<StateCount[]>;
  /** The dead jobs, the latest to die first, `limit` at most. */
  dead(limit: number): Promise<DeadJob[]>;
  /**
   * Makes the dead job `id` wait again, due now, with all its attempts; resolves its queue, or
   * `undefined` when no dead job has that id.
   */
  revive(id: string): Promise<string | undefined>;
  /** Deletes job `id` unless it is running; `false` when no such job is there to delete. */
  remove(id: string): Promise<boolean>;
  /** The most jobs one take gives (SQS: 10); unbounded when absent. */
  readonly takeLimit?: number;
  /** What a job's id looks like here: anything else names no job. */
  readonly ids: RegExp;
  /** The store, as messages name it. */
  readonly where: string;
  /** `error` with the store named, and `what` it could not do. */
  named(error: unknown, what: string): Error;
  /** Lets go of what the store holds (sockets, timers), once its workers closed. */
  close?(): void;
  /**
   * Checks the queues with a handler in this process before any runs, throwing a
   * `DefinitionError` for one the store cannot hold.
   */
  know?(handled: readonly HandledQueue[]): void;
}

/** A queue with a handler in this process, as the store checks it. */
export interface HandledQueue {
  readonly queue: string;
  readonly timeoutMs: number;
  /** Where the handler is, for a message. */
  readonly where: string;
}

/** A dead job, as the actuator lists it. */
export interface DeadJob {
  readonly id: string;
  readonly queue: string;
  /** The runs it had. */
  readonly attempt: number;
  /** When it died, on the database's clock. */
  readonly diedAt: string;
  /** Its last run's error. */
  readonly error: string | undefined;
}
