// What the datasources' pools report through OpenTelemetry's API, where it is installed, by the
// database client conventions: a CLIENT span per statement while a tracer provider is registered;
// while a meter provider is, each statement's duration, each wait for a connection, the waits
// that timed out, and the connections by state. With neither registered, a connection costs two
// look-ups and a statement nothing. A provider registered after bootstrap is followed, as the request metrics follow it.
import type {
  Attributes,
  BatchObservableCallback,
  Counter,
  Histogram,
  Meter,
  Observable,
} from "@opentelemetry/api";
import { type OtelApi, registeredTracer } from "../actuator/opentelemetry.ts";
import type { Datasource } from "../sql/datasource.ts";
import { DIALECTS } from "../sql/dialects.ts";
import {
  DbClientMeter,
  DURATION_BUCKETS,
  type MeterInstruments,
} from "../observe/db_client_meter.ts";
import type { DataConnection, DataPool } from "../sql/data_pool.ts";
import { DataError } from "../sql/data_error.ts";
import { operationName } from "./statement_operation.ts";

interface Instruments {
  readonly operations: Histogram;
  readonly waits: Histogram;
  readonly timeouts: Counter;
}

/** The telemetry of one app's pools: each pool it observes reports through it. */
export class DataTelemetry {
  readonly api: OtelApi;
  readonly #pools = new Set<ObservedPool>();
  // The search connections' histogram too (search_telemetry.ts), so that both describe it alike.
  readonly #meter: DbClientMeter<Instruments>;

  constructor(api: OtelApi) {
    this.api = api;
    this.#meter = new DbClientMeter(api, (meter, operations) => this.#make(meter, operations));
  }

  /** `pool`, reporting as the pool of `datasource`. */
  observe(pool: DataPool, datasource: Datasource): DataPool {
    const observed = new ObservedPool(pool, this, describe(datasource));
    this.#pools.add(observed);
    // A provider registered before bootstrap reads the connections before the first statement.
    this.instruments();
    return observed;
  }

  /** A closed pool reports no more; with the last one, neither does the app. */
  forget(pool: ObservedPool): void {
    this.#pools.delete(pool);
    if (this.#pools.size === 0) this.#meter.forget();
  }

  /** The instruments of the meter provider registered now; none while it is the no-op one. */
  instruments(): Instruments | undefined {
    // No pool to read (the last one closed): nothing is made, and the next pool observed follows
    // the provider then.
    return this.#pools.size === 0 ? undefined : this.#meter.current();
  }

  /** Thaw's tracer, while a tracer provider is registered. */
  tracer(): ReturnType<typeof registeredTracer> {
    return registeredTracer(this.api);
  }

  #make(meter: Meter, operations: Histogram): MeterInstruments<Instruments> {
    const value: Instruments = {
      operations,
      waits: meter.createHistogram("db.client.connection.wait_time", {
        unit: "s",
        description: "The time it took to obtain an open connection from the pool.",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
      timeouts: meter.createCounter("db.client.connection.timeouts", {
        unit: "{timeout}",
        description: "The number of connection timeouts that have occurred trying to obtain " +
          "a connection from the pool.",
      }),
    };
    const count = meter.createObservableUpDownCounter("db.client.connection.count", {
      unit: "{connection}",
      description: "The number of connections that are currently in state described by the " +
        "state attribute.",
    });
    const max = meter.createObservableUpDownCounter("db.client.connection.max", {
      unit: "{connection}",
      description: "The maximum number of open connections allowed.",
    });
    const pending = meter.createObservableUpDownCounter("db.client.connection.pending_requests", {
      unit: "{request}",
      description: "The number of current pending requests for an open connection.",
    });
    const observables: Observable[] = [count, max, pending];
    const read: BatchObservableCallback = (result) => {
      for (const pool of this.#pools) {
        const { poolAttributes } = pool.described;
        const state = (name: string) => ({ ...poolAttributes, "db.client.connection.state": name });
        result.observe(count, pool.idleCount(), state("idle"));
        result.observe(count, pool.used, state("used"));
        result.observe(max, pool.maxSize, poolAttributes);
        result.observe(pending, pool.pending, poolAttributes);
      }
    };
    meter.addBatchObservableCallback(read, observables);
    return { value, undo: () => meter.removeBatchObservableCallback(read, observables) };
  }
}

/** What each span and metric of a pool says of it. */
interface Described {
  /** What the span's name says after the operation: the database's name, where it has one. */
  readonly target: string | undefined;
  /** The span's name without an operation. */
  readonly system: string;
  /** Of every span and operation. */
  readonly attributes: Attributes;
  /** Of the pool's own metrics. */
  readonly poolAttributes: Attributes;
}

// The conventions' attributes, read once per pool. The pool's name (the datasource's) is on the
// operations too: an app with two datasources on one server tells them apart by it.
function describe({ name, kind, location }: Datasource): Described {
  const dialect = DIALECTS[kind];
  const { defaultPort } = dialect;
  const system = dialect.systemOf(location);
  const poolAttributes: Attributes = { "db.client.connection.pool.name": name };
  const attributes: Attributes = { "db.system.name": system, ...poolAttributes };
  let namespace: string | undefined;
  if (defaultPort !== undefined) {
    try {
      const url = new URL(location);
      namespace = decodeURIComponent(url.pathname.slice(1)) || undefined;
      if (url.hostname !== "") {
        attributes["server.address"] = url.hostname;
        attributes["server.port"] = url.port === "" ? defaultPort : Number(url.port);
      }
    } catch {
      // A location the driver reads its own way: the spans go without the server.
    }
  }
  if (namespace !== undefined) attributes["db.namespace"] = namespace;
  return { target: namespace, system, attributes, poolAttributes };
}

// What `error.type` says of a failed statement: the database's code where it gave one (a
// SQLSTATE), else why the call failed.
function errorType(error: unknown): string {
  if (error instanceof DataError) return error.code ?? error.reason;
  return error instanceof Error ? error.name : "_OTHER";
}

class ObservedPool implements DataPool {
  readonly name: string;
  readonly kind: DataPool["kind"];
  readonly maxSize: number;
  readonly described: Described;
  /** Connections callers hold now, of those taken while a provider was registered. */
  used = 0;
  /** Callers waiting for a connection now, of those that began while one was registered. */
  pending = 0;
  readonly #pool: DataPool;
  readonly #telemetry: DataTelemetry;

  constructor(pool: DataPool, telemetry: DataTelemetry, described: Described) {
    this.#pool = pool;
    this.#telemetry = telemetry;
    this.described = described;
    this.name = pool.name;
    this.kind = pool.kind;
    this.maxSize = pool.maxSize;
  }

  get native(): unknown {
    return this.#pool.native;
  }

  idleCount(): number {
    return this.#pool.idleCount();
  }

  acquire(): Promise<DataConnection> {
    const instruments = this.#telemetry.instruments();
    // Nothing to report to: the driver's connection as it is, which costs a statement nothing
    // (on SQLite the wrapping alone was a tenth of a read). A provider registered while it is
    // held sees it from the next connection on.
    if (instruments === undefined && this.#telemetry.tracer() === undefined) {
      return this.#pool.acquire();
    }
    return this.#observed(instruments);
  }

  async #observed(instruments: Instruments | undefined): Promise<DataConnection> {
    const start = instruments === undefined ? 0 : performance.now();
    this.pending++;
    let connection: DataConnection;
    try {
      connection = await this.#pool.acquire();
    } catch (error) {
      if (error instanceof DataError && error.reason === "timeout") {
        instruments?.timeouts.add(1, this.described.poolAttributes);
      }
      throw error;
    } finally {
      this.pending--;
    }
    instruments?.waits.record((performance.now() - start) / 1000, this.described.poolAttributes);
    this.used++;
    return new ObservedConnection(this, connection);
  }

  /** Runs one statement of a connection of this pool, reporting it. */
  async statement<T>(text: string, run: () => Promise<T>): Promise<T> {
    const tracer = this.#telemetry.tracer();
    const instruments = this.#telemetry.instruments();
    if (tracer === undefined && instruments === undefined) return await run();
    const { api } = this.#telemetry;
    const operation = operationName(text);
    const attributes: Attributes = operation === undefined
      ? this.described.attributes
      : { ...this.described.attributes, "db.operation.name": operation };
    // The text as the client sent it: a tagged template's values are bound, never in it.
    const { target, system } = this.described;
    // The conventions' name: `{operation} {target}`, what of it is known, else the system.
    const name = [operation, target].filter((part) => part !== undefined).join(" ") || system;
    const span = tracer?.startSpan(
      name,
      { kind: api.SpanKind.CLIENT, attributes: { ...attributes, "db.query.text": text } },
      api.context.active(),
    );
    const start = performance.now();
    try {
      const result = await run();
      span?.end();
      instruments?.operations.record((performance.now() - start) / 1000, attributes);
      return result;
    } catch (error) {
      const type = errorType(error);
      if (span !== undefined) {
        span.setAttribute("error.type", type);
        if (error instanceof DataError && error.code !== undefined) {
          span.setAttribute("db.response.status_code", error.code);
        }
        if (error instanceof Error) span.recordException(error);
        span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
      }
      instruments?.operations.record((performance.now() - start) / 1000, {
        ...attributes,
        "error.type": type,
      });
      throw error;
    }
  }

  /** A connection given back. */
  released(): void {
    this.used--;
  }

  close(): Promise<void> {
    this.#telemetry.forget(this);
    return this.#pool.close();
  }
}

class ObservedConnection implements DataConnection {
  readonly #pool: ObservedPool;
  readonly #connection: DataConnection;
  #released = false;

  constructor(pool: ObservedPool, connection: DataConnection) {
    this.#pool = pool;
    this.#connection = connection;
  }

  // Each call handed on whole (`...args`): a parameter the interface gains cannot be dropped here.
  run(...args: Parameters<DataConnection["run"]>): ReturnType<DataConnection["run"]> {
    return this.#pool.statement(args[0], () => this.#connection.run(...args));
  }

  control(...args: Parameters<DataConnection["control"]>): Promise<void> {
    return this.#pool.statement(args[0], () => this.#connection.control(...args));
  }

  // The span is the statement's start (its first rows on MariaDB and SQLite, its DECLARE on
  // PostgreSQL); the batches after it are the caller's pace, not the database's.
  cursor(...args: Parameters<DataConnection["cursor"]>): ReturnType<DataConnection["cursor"]> {
    return this.#pool.statement(args[0], () => this.#connection.cursor(...args));
  }

  release(broken?: boolean): void {
    if (!this.#released) {
      this.#released = true;
      this.#pool.released();
    }
    this.#connection.release(broken);
  }
}
