// What the jobs report through OpenTelemetry's API, by the messaging conventions where they fit: a
// PRODUCER `send <queue>` span per enqueue, whose `traceparent` is stored with the job; a CONSUMER
// `process <queue>` span per run, a root of its own linked to that span (a job may run hours later,
// and many times); the counters `thaw.jobs.enqueued`, `.started`, `.completed`, `.failed`, `.dead`,
// the histogram `thaw.jobs.run.duration`, and, read from the store at each collection within a
// bound, the gauges `thaw.jobs.waiting.age` and `thaw.jobs.count`. Loaded only where the API is
// installed (`optionalApi()`): an app without it never loads this file.
import type {
  Attributes,
  BatchObservableCallback,
  Context,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
  Span,
} from "@opentelemetry/api";
import { DURATION_BUCKETS } from "../actuator/duration_buckets.ts";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import { errorClassOf } from "../observe/error_class.ts";
import { FollowedMeter } from "../observe/followed_meter.ts";
import { LastReading } from "../observe/last_reading.ts";
import { spanContextOf, traceparentOf } from "../observe/traceparent.ts";
import type { Enqueued, StateCount, TakenJob } from "./job_store.ts";
import type { RunEnd } from "./run_outcome.ts";

/** `messaging.system` of the jobs' spans and points. */
const SYSTEM = "thaw";

interface Instruments {
  readonly enqueued: Counter;
  readonly started: Counter;
  readonly completed: Counter;
  readonly failed: Counter;
  readonly dead: Counter;
  readonly duration: Histogram;
  readonly age: ObservableGauge;
  readonly count: ObservableGauge;
  readonly read: BatchObservableCallback;
}

/** One run as the telemetry follows it, from its take to its end. */
export interface ObservedRun {
  /** Runs `fn` (the handler) inside the run's span, and counts the run as started. */
  within<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Ends the run's span and records its outcome: `dead` when the job died of it, `thrown` what
   * the handler threw (its class becomes `error.type`).
   */
  end(end: RunEnd, dead: boolean, thrown: unknown): void;
}

/** The jobs' spans and metrics over OpenTelemetry's API. */
export class JobsTelemetry {
  readonly #api: OtelApi;
  readonly #instruments: FollowedMeter<Instruments>;
  readonly #counts: () => Promise<readonly StateCount[]>;
  readonly #reading: LastReading<readonly StateCount[]>;

  /**
   * `counts` reads the store's counts for the gauges, waited for `timeoutMs` at most at each
   * collection (past it, the last counts read are reported).
   */
  constructor(api: OtelApi, counts: () => Promise<readonly StateCount[]>, timeoutMs = 1000) {
    this.#api = api;
    this.#counts = counts;
    this.#reading = new LastReading<readonly StateCount[]>([], timeoutMs);
    this.#instruments = new FollowedMeter(
      api,
      (meter) => this.#make(meter),
      (made, meter) => meter.removeBatchObservableCallback(made.read, [made.age, made.count]),
    );
  }

  /**
   * Makes the instruments on the meter provider registered now, so that the gauges are collected
   * before anything was enqueued or run here (a replica whose workers are stuck); the workers call
   * it at each look for jobs, to follow a provider registered later.
   */
  follow(): void {
    this.#instruments.current();
  }

  /** Stops reporting: the gauges' callback is removed, and nothing reads the store for them. */
  close(): void {
    this.#instruments.leave();
  }

  /**
   * Runs `write` (the store's enqueue) inside a PRODUCER `send <queue>` span, handing it the
   * span's `traceparent` to keep with the job, and counts `thaw.jobs.enqueued` when it created
   * one. Without a tracer, `write` is given nothing to keep.
   */
  async enqueue(
    queue: string,
    write: (trace: string | undefined) => Promise<Enqueued>,
  ): Promise<Enqueued> {
    const api = this.#api;
    let instruments: Instruments | undefined;
    let span: Span | undefined;
    let trace: string | undefined;
    quietly(() => {
      instruments = this.#instruments.current();
      span = registeredTracer(api)?.startSpan(`send ${queue}`, {
        kind: api.SpanKind.PRODUCER,
        attributes: {
          ...attributesOf(queue),
          "messaging.operation.name": "send",
          "messaging.operation.type": "send",
        },
      });
      if (span !== undefined) trace = traceparentOf(span.spanContext());
    });
    try {
      // The write's own spans (the database's) are the send's children.
      const enqueued = span === undefined
        ? await write(undefined)
        : await within(api, api.trace.setSpan(api.context.active(), span), () => write(trace));
      quietly(() => {
        span?.setAttribute("messaging.message.id", enqueued.id);
        if (enqueued.created) instruments?.enqueued.add(1, attributesOf(queue));
      });
      return enqueued;
    } catch (error) {
      quietly(() => {
        span?.setAttribute("error.type", errorClassOf(error));
        // No message: it may quote the payload.
        span?.setStatus({ code: api.SpanStatusCode.ERROR });
      });
      throw error;
    } finally {
      quietly(() => span?.end());
    }
  }

  /**
   * Begins following a run of `job`: a CONSUMER `process <queue>` span, a root linked to the span
   * that enqueued the job where its `traceparent` was kept. Never throws: where the app's SDK
   * does, the run goes on unreported.
   */
  run(job: TakenJob): ObservedRun {
    try {
      return this.#observed(job);
    } catch {
      return UNREPORTED;
    }
  }

  #observed(job: TakenJob): ObservedRun {
    const api = this.#api;
    const tracer = registeredTracer(api);
    const instruments = this.#instruments.current();
    const attributes = attributesOf(job.queue);
    let span: Span | undefined;
    let context: Context = api.ROOT_CONTEXT;
    if (tracer !== undefined) {
      const enqueuer = spanContextOf(api, job.trace);
      span = tracer.startSpan(`process ${job.queue}`, {
        kind: api.SpanKind.CONSUMER,
        root: true,
        attributes: {
          ...attributes,
          "messaging.operation.name": "process",
          "messaging.operation.type": "process",
          "messaging.message.id": job.id,
          "thaw.job.attempt": job.attempt,
        },
        links: enqueuer === undefined ? [] : [{ context: enqueuer }],
      }, api.ROOT_CONTEXT);
      context = api.trace.setSpan(api.ROOT_CONTEXT, span);
    }
    let started: number | undefined;
    return {
      within: <T>(fn: () => Promise<T>): Promise<T> => {
        started = performance.now();
        quietly(() => instruments?.started.add(1, attributes));
        return within(api, context, fn);
      },
      end: (end: RunEnd, dead: boolean, thrown: unknown): void =>
        quietly(() => {
          const type = end === "failed" ? errorClassOf(thrown) : undefined;
          if (span !== undefined) {
            span.setAttribute("thaw.job.outcome", end);
            if (type !== undefined) span.setAttribute("error.type", type);
            if (end === "failed" || end === "refused") {
              span.setStatus({ code: api.SpanStatusCode.ERROR });
            }
            span.end();
          }
          if (instruments === undefined) return;
          const point = type === undefined ? attributes : { ...attributes, "error.type": type };
          if (started !== undefined) {
            instruments.duration.record((performance.now() - started) / 1000, point);
          }
          if (end === "succeeded") instruments.completed.add(1, attributes);
          else if (end === "failed") instruments.failed.add(1, point);
          if (dead) instruments.dead.add(1, attributes);
        }),
    };
  }

  #make(meter: Meter): Instruments {
    const age = meter.createObservableGauge("thaw.jobs.waiting.age", {
      unit: "s",
      description: "How long the earliest due waiting job of a queue has been due.",
    });
    const count = meter.createObservableGauge("thaw.jobs.count", {
      unit: "{job}",
      description: "Jobs kept, by queue and state (waiting, running, done, dead).",
    });
    const read: BatchObservableCallback = async (result) => {
      for (const row of await this.#reading.value(this.#counts)) {
        const attributes = { ...attributesOf(row.queue), "thaw.job.state": row.state };
        result.observe(count, row.jobs, attributes);
        if (row.state === "waiting") {
          result.observe(age, (row.dueForMs ?? 0) / 1000, attributesOf(row.queue));
        }
      }
    };
    meter.addBatchObservableCallback(read, [age, count]);
    const counter = (name: string, description: string) =>
      meter.createCounter(`thaw.jobs.${name}`, { unit: "{job}", description });
    return {
      enqueued: counter("enqueued", "Jobs enqueued (an enqueue whose key was held creates none)."),
      started: counter("started", "Runs whose handler was called."),
      completed: counter("completed", "Runs that succeeded: their job is done."),
      failed: counter("failed", "Runs that threw or outlasted their lease, by error.type."),
      dead: counter("dead", "Jobs that died: their last run failed, or their payload was refused."),
      duration: meter.createHistogram("thaw.jobs.run.duration", {
        unit: "s",
        description: "Duration of a run's handler.",
        advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
      }),
      age,
      count,
      read,
    };
  }
}

// The attributes of every span and point of a queue's jobs.
function attributesOf(queue: string): Attributes {
  return { "messaging.system": SYSTEM, "messaging.destination.name": queue };
}

/** A run nothing reports on. */
const UNREPORTED: ObservedRun = { within: (fn) => fn(), end: () => {} };

// Runs `fn` inside `context`; where the context manager fails before calling it, outside.
function within<T>(api: OtelApi, context: Context, fn: () => Promise<T>): Promise<T> {
  let called = false;
  try {
    return api.context.with(context, () => {
      called = true;
      return fn();
    });
  } catch (error) {
    if (called) throw error;
    return fn();
  }
}

// What an SDK of the app's throws is not the job's failure: the job goes on, unreported.
function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // Nothing to do: the telemetry is the app's SDK's, and its failure is not the job's.
  }
}
