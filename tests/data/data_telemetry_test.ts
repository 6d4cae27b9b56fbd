// The datasources' spans and metrics through OpenTelemetry's real SDK, on each database this
// runtime has: a CLIENT span per statement under the caller's span, the connections by state,
// the waits and their timeouts, a provider registered after bootstrap, and nothing from a pool
// once it is closed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { Application } from "../../mod.ts";
import { DataError, SqlClient } from "../../data.ts";
import { DataTelemetry } from "../../src/data/data_telemetry.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import type { Datasource } from "../../src/sql/datasource.ts";
import { KINDS } from "../migrate/sql/databases.ts";
import { deferred } from "../deferred.ts";
import { datasourceEntries, rejection } from "../sql/pools.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";
import { dataApp } from "./data_app.ts";

const database = datasourceEntries();

// A pool the telemetry only reads (its size, its idle connections): nothing acquires from it.
function unusedPool(name: string, maxSize: number, idleCount: () => number): DataPool {
  return {
    name,
    kind: "sqlite",
    maxSize,
    native: undefined,
    idleCount,
    acquire: () => Promise.reject(new Error("not used")),
    close: () => Promise.resolve(),
  };
}

const memoryDatasource = (name: string): Datasource =>
  ({ name, kind: "sqlite", location: ":memory:" }) as Datasource;

restoreMeterProviderAfter();

describe("DataTelemetry", () => {
  it("has no tracer and no instruments while no provider is registered", () => {
    const telemetry = new DataTelemetry(api);
    assert.equal(telemetry.tracer(), undefined);
    assert.equal(telemetry.instruments(), undefined);
  });

  it("stops reading a pool once it is closed", async () => {
    const reader = new CollectingReader();
    // Another file of the process (Bun runs them all in one) may have registered its own.
    api.metrics.disable();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      let reads = 0;
      const pool = unusedPool("counted", 3, () => ++reads);
      const observed = new DataTelemetry(api).observe(pool, memoryDatasource("counted"));
      const max = { "db.client.connection.pool.name": "counted" };
      assert.equal(valueOf(await reader.points("db.client.connection.max"), max), 3);
      assert.equal(reads, 1);
      await observed.close();
      await reader.points("db.client.connection.max");
      assert.equal(reads, 1);
    } finally {
      api.metrics.disable();
    }
  });

  it("reads a pool opened after the last one closed, though a statement came in between", async () => {
    const reader = new CollectingReader();
    api.metrics.disable();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      const pool = (name: string): DataPool => unusedPool(name, 4, () => 0);
      const telemetry = new DataTelemetry(api);
      await telemetry.observe(pool("first"), memoryDatasource("first")).close();
      // A statement of the closing pool, with no pool left to read.
      telemetry.instruments();
      telemetry.observe(pool("second"), memoryDatasource("second"));
      const points = await reader.points("db.client.connection.max");
      assert.equal(valueOf(points, { "db.client.connection.pool.name": "second" }), 4);
    } finally {
      api.metrics.disable();
    }
  });
});

for (const kind of KINDS) {
  describe(`data() telemetry on ${kind}`, () => {
    const exporter = new InMemorySpanExporter();
    let reader: CollectingReader;

    before(() => {
      api.trace.setGlobalTracerProvider(
        new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
      );
      api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    });
    after(() => {
      api.trace.disable();
      api.context.disable();
      api.metrics.disable();
    });

    function registerMeters(): void {
      api.metrics.disable();
      reader = new CollectingReader();
      api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    }

    async function app(name: string, extra: Record<string, unknown> = {}): Promise<Application> {
      const { entry } = await database(kind, name, extra);
      return await dataApp(entry);
    }

    it("gives each statement a CLIENT span under the caller's, its values never in it", async () => {
      registerMeters();
      const started = await app("shop");
      try {
        const sql = started.getBean(SqlClient);
        exporter.reset();
        const tracer = api.trace.getTracer("test");
        const secret = "s3cret-value";
        await tracer.startActiveSpan("request", async (parent) => {
          await sql.query`SELECT ${secret} AS v`;
          await sql.transaction(async () => {
            await sql.execute`/* why */ CREATE TABLE items (v VARCHAR(20))`;
          });
          await rejection(sql.query`SELECT * FROM missing_table`);
          parent.end();
        });
        const spans = exporter.getFinishedSpans().filter((s) => s.name !== "request");
        const parent = exporter.getFinishedSpans().find((s) => s.name === "request")!;
        const system = { sqlite: "sqlite", postgres: "postgresql", mysql: "mysql" }[kind];
        const target = kind === "sqlite" ? "" : ` ${spans[0].attributes["db.namespace"]}`;
        assert.deepEqual(
          spans.map((s) => s.name),
          // MySQL's session leaves autocommit for the transaction, and is given it back after.
          (kind === "mysql"
            ? ["SELECT", "SET", "CREATE", "COMMIT", "SET", "SELECT"]
            : ["SELECT", "BEGIN", "CREATE", "COMMIT", "SELECT"]).map((op) => `${op}${target}`),
        );
        for (const span of spans) {
          assert.equal(span.kind, api.SpanKind.CLIENT);
          assert.equal(span.parentSpanContext?.spanId, parent.spanContext().spanId);
          assert.equal(span.attributes["db.system.name"], system);
          assert.equal(span.attributes["db.client.connection.pool.name"], "shop");
          assert.ok(!JSON.stringify(span.attributes).includes(secret));
        }
        const [select] = spans;
        assert.equal(select.attributes["db.operation.name"], "SELECT");
        assert.match(String(select.attributes["db.query.text"]), /^SELECT (\$1|\?) AS v$/);
        if (kind !== "sqlite") {
          assert.equal(select.attributes["server.address"], "127.0.0.1");
          assert.equal(typeof select.attributes["server.port"], "number");
        }
        const failed = spans[spans.length - 1];
        assert.equal(failed.status.code, api.SpanStatusCode.ERROR);
        assert.equal(
          failed.attributes["error.type"],
          { sqlite: "SQLITE_ERROR", postgres: "42P01", mysql: "ER_NO_SUCH_TABLE" }[kind],
        );
        assert.equal(failed.events[0]?.name, "exception");
        // The operations' histogram, by operation, the failure with its error.type.
        const durations = await reader.points("db.client.operation.duration");
        const count = (attributes: api.Attributes) =>
          (valueOf(durations, attributes) as { count: number } | undefined)?.count;
        assert.equal(count({ "db.operation.name": "CREATE", "db.system.name": system }), 1);
        assert.equal(
          count({ "db.operation.name": "SELECT", "error.type": failed.attributes["error.type"] }),
          1,
        );
      } finally {
        await started.close();
      }
    });

    it("reports the connections by state, the waits, and a wait that timed out", async () => {
      registerMeters();
      const started = await app("orders", { pool: { "max-size": 1, "acquire-timeout": 300 } });
      try {
        const sql = started.getBean(SqlClient);
        await sql.query`SELECT 1 AS one`;
        const pool = { "db.client.connection.pool.name": "orders" };
        const state = async (name: string) =>
          valueOf(await reader.points("db.client.connection.count"), {
            ...pool,
            "db.client.connection.state": name,
          });
        assert.equal(await state("used"), 0);
        assert.equal(await state("idle"), 1);
        assert.equal(valueOf(await reader.points("db.client.connection.max"), pool), 1);
        // A transaction holds the one connection; another call waits for it, then gives up.
        const holding = deferred<void>();
        const entered = deferred<void>();
        const tx = sql.transaction(async () => {
          await sql.query`SELECT 1 AS one`;
          entered.resolve();
          await holding.promise;
        });
        await entered.promise;
        assert.equal(await state("used"), 1);
        assert.equal(await state("idle"), 0);
        const waiting = sql.query`SELECT 2 AS two`;
        assert.equal(
          valueOf(await reader.points("db.client.connection.pending_requests"), pool),
          1,
        );
        const error = await rejection(waiting);
        assert.equal(error.reason, "timeout");
        holding.resolve();
        await tx;
        assert.equal(valueOf(await reader.points("db.client.connection.timeouts"), pool), 1);
        assert.equal(
          valueOf(await reader.points("db.client.connection.pending_requests"), pool),
          0,
        );
        assert.equal(await state("used"), 0);
        const waits = valueOf(await reader.points("db.client.connection.wait_time"), pool) as {
          count: number;
        };
        assert.equal(waits.count, 2);
      } finally {
        await started.close();
      }
    });

    it("follows a meter provider registered after bootstrap", async () => {
      api.metrics.disable();
      const started = await app("late");
      try {
        const sql = started.getBean(SqlClient);
        await sql.query`SELECT 1 AS one`;
        registerMeters();
        await sql.query`SELECT 1 AS one`;
        const pool = { "db.client.connection.pool.name": "late" };
        const durations = await reader.points("db.client.operation.duration");
        assert.equal((valueOf(durations, pool) as { count: number }).count, 1);
        assert.equal(valueOf(await reader.points("db.client.connection.max"), pool), 10);
      } finally {
        await started.close();
      }
    });

    // The observed connection stands between the client and the pool's: it must hand on every
    // argument, the call's own query timeout included.
    if (kind !== "sqlite") {
      it("keeps a withTimeout(ms) call's timeout with a provider registered", async () => {
        registerMeters();
        const started = await app("timed");
        try {
          const sql = started.getBean(SqlClient).withTimeout(200);
          const long = kind === "postgres"
            ? sql.query`SELECT pg_sleep(${5})`
            : sql.query`SELECT SLEEP(${5}) AS slept`;
          const error = await rejection(long);
          assert.equal(error.reason, "timeout");
          assert.match(error.message, /query timeout \(200 ms, withTimeout\)/);
        } finally {
          await started.close();
        }
      });
    }

    it("leaves a statement that ran unmarked, though `one` refuses its rows", async () => {
      registerMeters();
      const started = await app("rows");
      try {
        const sql = started.getBean(SqlClient);
        exporter.reset();
        // `one` fails after the statement ran: the statement's span is not an error.
        const error = await rejection(sql.one`SELECT 1 AS one UNION ALL SELECT 2`);
        assert.ok(error instanceof DataError);
        assert.equal(error.reason, "rows");
        const [span] = exporter.getFinishedSpans();
        assert.notEqual(span.status.code, api.SpanStatusCode.ERROR);
      } finally {
        await started.close();
      }
    });
  });
}
