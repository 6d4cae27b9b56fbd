// The jobs through OpenTelemetry's real SDK, on each database: the enqueue's PRODUCER span, whose
// context the table keeps; each run's CONSUMER span, a root linked to it, the handler's own spans
// its children; the counters, the run duration and the gauges read from the table. A trace
// context the table holds that is not one (written by hand, any bytes) runs the job unlinked.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type Histogram, MeterProvider } from "@opentelemetry/sdk-metrics";
import { Service } from "../../mod.ts";
import { SqlClient } from "../../data.ts";
import { type Job, JobHandler, JobQueue } from "../../jobs.ts";
import type { StandardSchemaV1 } from "../../src/config/standard_schema.ts";
import { datasourceEntries, KINDS } from "../sql/pools.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";
import { jobsApp, waitFor } from "./job_support.ts";
import { JobsTelemetry } from "../../src/jobs/jobs_telemetry.ts";

restoreMeterProviderAfter();

const databases = datasourceEntries();

class PartnerDown extends Error {}

@Service()
class Partner {
  calls = 0;
  @JobHandler("partner", { backoff: { delay: 1, maxDelay: 1 } })
  call(_payload: unknown, job: Job): void {
    this.calls++;
    // The handler's own span: a child of its run's.
    api.trace.getTracer("test").startActiveSpan(`inside ${job.attempt}`, (span) => span.end());
    if (job.attempt === 1) throw new PartnerDown("the partner answered 503");
  }
}

const numbersOnly: StandardSchemaV1<unknown, number> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) =>
      typeof value === "number" ? { value } : { issues: [{ message: "not a number" }] },
  },
};

@Service()
class Doomed {
  @JobHandler("doomed", { attempts: 1, schema: numbersOnly })
  run(): void {
    throw new RangeError("always");
  }
}

for (const kind of KINDS) {
  describe(`jobs() telemetry on ${kind}`, () => {
    const exporter = new InMemorySpanExporter();
    let reader: CollectingReader;

    before(() => {
      api.trace.setGlobalTracerProvider(
        new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
      );
      api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      api.metrics.disable();
      reader = new CollectingReader();
      api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    });
    after(() => {
      api.trace.disable();
      api.context.disable();
      api.metrics.disable();
    });

    const spans = (name: string): ReadableSpan[] =>
      exporter.getFinishedSpans().filter((s) => s.name === name);
    const counted = async (name: string, attributes: api.Attributes) =>
      valueOf(await reader.points(name), attributes);

    it("links each run's CONSUMER span to the enqueue's PRODUCER span, and counts the runs", async () => {
      exporter.reset();
      const { app } = await jobsApp(databases, kind, [Partner, Doomed]);
      try {
        const queue = app.getBean(JobQueue);
        const sql = app.getBean(SqlClient);
        const caller = api.trace.getTracer("test").startSpan("caller");
        const enqueued = await api.context.with(
          api.trace.setSpan(api.context.active(), caller),
          () => sql.transaction(() => queue.enqueue("partner", { n: 1 }, { key: "k" })),
        );
        caller.end();
        // A key it holds creates no job: counted once.
        assert.equal((await queue.enqueue("partner", { n: 2 }, { key: "k" })).created, false);
        await queue.enqueue("doomed", 7);
        await queue.enqueue("doomed", "not a number");

        const [send] = spans("send partner");
        assert.ok(send, "a PRODUCER span per enqueue");
        assert.equal(send.kind, api.SpanKind.PRODUCER);
        assert.equal(send.parentSpanContext?.spanId, caller.spanContext().spanId);
        assert.equal(send.attributes["messaging.destination.name"], "partner");
        assert.equal(send.attributes["messaging.message.id"], enqueued.id);
        const [row] = await sql.query`SELECT trace FROM thaw_jobs WHERE id = ${enqueued.id}`;
        const { traceId, spanId } = send.spanContext();
        assert.equal(row.trace, `00-${traceId}-${spanId}-01`);

        app.start();
        await waitFor(
          "the runs' spans",
          () => spans("process partner").length === 2 && spans("process doomed").length === 2,
        );
        const runs = spans("process partner").sort((a, b) =>
          Number(a.attributes["thaw.job.attempt"]) - Number(b.attributes["thaw.job.attempt"])
        );
        for (const run of runs) {
          assert.equal(run.kind, api.SpanKind.CONSUMER);
          // A root of its own: a job may run hours after the request that enqueued it.
          assert.equal(run.parentSpanContext, undefined);
          assert.notEqual(run.spanContext().traceId, traceId);
          assert.deepEqual(run.links.map((l) => l.context.spanId), [spanId]);
          assert.equal(run.attributes["messaging.message.id"], enqueued.id);
        }
        assert.deepEqual(runs.map((r) => r.attributes["thaw.job.outcome"]), [
          "failed",
          "succeeded",
        ]);
        assert.equal(runs[0].attributes["error.type"], "PartnerDown");
        assert.equal(runs[0].status.code, api.SpanStatusCode.ERROR);
        // No message on the span: a handler's error may quote the payload.
        assert.equal(runs[0].status.message, undefined);
        assert.equal(runs[1].status.code, api.SpanStatusCode.UNSET);
        for (const [i, run] of runs.entries()) {
          const [inside] = spans(`inside ${i + 1}`);
          assert.equal(inside.parentSpanContext?.spanId, run.spanContext().spanId);
        }
        // Enqueued outside any span: the PRODUCER span is a root, and the runs still link to it.
        for (const run of spans("process doomed")) assert.equal(run.links.length, 1);

        const partner = { "messaging.destination.name": "partner" };
        const doomed = { "messaging.destination.name": "doomed" };
        assert.equal(await counted("thaw.jobs.enqueued", partner), 1);
        assert.equal(await counted("thaw.jobs.enqueued", doomed), 2);
        assert.equal(await counted("thaw.jobs.started", partner), 2);
        assert.equal(await counted("thaw.jobs.completed", partner), 1);
        assert.equal(
          await counted("thaw.jobs.failed", { ...partner, "error.type": "PartnerDown" }),
          1,
        );
        assert.equal(await counted("thaw.jobs.dead", partner), undefined);
        // One refused untried (not started), one failed its only attempt: both dead.
        assert.equal(await counted("thaw.jobs.started", doomed), 1);
        assert.equal(await counted("thaw.jobs.dead", doomed), 2);
        const duration = await counted("thaw.jobs.run.duration", partner) as Histogram;
        assert.equal(duration.count, 1);
        assert.equal(
          (await counted("thaw.jobs.run.duration", {
            ...partner,
            "error.type": "PartnerDown",
          }) as Histogram).count,
          1,
        );
        assert.equal(
          await counted("thaw.jobs.count", { ...partner, "thaw.job.state": "done" }),
          1,
        );
        assert.equal(
          await counted("thaw.jobs.count", { ...doomed, "thaw.job.state": "dead" }),
          2,
        );
      } finally {
        await app.close();
      }
    });

    it("reports the waiting jobs and how long the earliest has been due", async () => {
      const { app } = await jobsApp(databases, kind, []);
      try {
        const queue = app.getBean(JobQueue);
        const sql = app.getBean(SqlClient);
        await queue.enqueue("nobody", 1);
        await queue.enqueue("nobody", 2);
        await queue.enqueue("nobody", 3, { delay: "1h" });
        // Due for a while: moved back on the table's own clock, as the store keeps it.
        await sql.unsafe("UPDATE thaw_jobs SET run_at = run_at - 60000 WHERE payload = '1'");
        const nobody = { "messaging.destination.name": "nobody" };
        assert.equal(
          await counted("thaw.jobs.count", { ...nobody, "thaw.job.state": "waiting" }),
          3,
        );
        const age = Number(await counted("thaw.jobs.waiting.age", nobody));
        assert.ok(age >= 60 && age < 3600, `waiting age ${age} s`);
      } finally {
        await app.close();
      }
    });

    it("reports the table from the start, before any enqueue or run", async () => {
      const first = await jobsApp(databases, kind, []);
      const stuck = { "messaging.destination.name": "stuck", "thaw.job.state": "waiting" };
      try {
        await first.app.getBean(JobQueue).enqueue("stuck", 1);
        assert.equal(await counted("thaw.jobs.count", stuck), 1);
      } finally {
        await first.app.close();
      }
      // A replica that only started (its workers stuck, say) reports the table all the same: a
      // queue only the table names shows.
      const { app } = await jobsApp(databases, kind, [], { entry: first.entry });
      try {
        await app.getBean(SqlClient).unsafe("UPDATE thaw_jobs SET queue = 'elsewhere'");
        app.start();
        assert.equal(
          await counted("thaw.jobs.count", { ...stuck, "messaging.destination.name": "elsewhere" }),
          1,
        );
      } finally {
        await app.close();
      }
    });

    it("runs and enqueues as ever when the app's SDK throws", async () => {
      exporter.reset();
      const { app } = await jobsApp(databases, kind, [Partner]);
      const provider = api.trace.getTracerProvider();
      // Broken for the jobs' spans alone: the database's own go on.
      const broken: api.TracerProvider = {
        getTracer: (name, version) => {
          const tracer = provider.getTracer(name, version);
          return {
            startSpan: (span: string, ...rest: [api.SpanOptions?, api.Context?]) => {
              if (/^(send|process) /.test(span)) throw new Error("the SDK broke");
              return tracer.startSpan(span, ...rest);
            },
            startActiveSpan: tracer.startActiveSpan.bind(tracer),
          } as api.Tracer;
        },
      };
      api.trace.disable();
      api.trace.setGlobalTracerProvider(broken);
      try {
        const queue = app.getBean(JobQueue);
        const sql = app.getBean(SqlClient);
        await queue.enqueue("partner", { n: 1 });
        app.start();
        await waitFor("the job done", async () => {
          const rows = await sql.query`SELECT state FROM thaw_jobs`;
          return rows.length === 1 && rows[0].state === "done";
        });
      } finally {
        await app.close();
        api.trace.disable();
        api.trace.setGlobalTracerProvider(provider);
      }
    });

    it("runs a job whose kept trace context is not one, unlinked, whatever its bytes", async () => {
      exporter.reset();
      const { app } = await jobsApp(databases, kind, [Partner]);
      try {
        const queue = app.getBean(JobQueue);
        const sql = app.getBean(SqlClient);
        const hostile = [
          "garbage",
          "00-00000000000000000000000000000000-0000000000000000-01",
          "00-" + "a".repeat(32) + "-" + "b".repeat(16) + "-01\u0001",
          Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).join(""),
        ];
        const ids: string[] = [];
        for (const [n, trace] of hostile.entries()) {
          const { id } = await queue.enqueue("partner", { n });
          await sql.query`UPDATE thaw_jobs SET trace = ${trace} WHERE id = ${id}`;
          ids.push(id);
        }
        app.start();
        await waitFor("every job done", async () => {
          const rows = await sql.query`SELECT state FROM thaw_jobs`;
          return rows.every((r) => r.state === "done");
        });
        await waitFor("their spans", () => spans("process partner").length === 2 * ids.length);
        for (const run of spans("process partner")) assert.deepEqual(run.links, [], run.name);
      } finally {
        await app.close();
      }
    });
  });
}

describe("JobsTelemetry's gauges", () => {
  it("read the store at each collection until closed, then never", async () => {
    api.metrics.disable();
    const reader = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      let reads = 0;
      const telemetry = new JobsTelemetry(api, () => {
        reads++;
        return Promise.resolve([{ queue: "q", state: "waiting", jobs: 2, dueForMs: 1500 }]);
      });
      telemetry.follow();
      assert.equal(valueOf(await reader.points("thaw.jobs.waiting.age"), {}), 1.5);
      assert.equal(reads, 1);
      telemetry.close();
      await reader.points("thaw.jobs.count");
      assert.equal(reads, 1);
    } finally {
      api.metrics.disable();
    }
  });
});
