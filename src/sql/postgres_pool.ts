// PostgreSQL's pool: Thaw's own over pg.Client (postgres_clients.ts), its clients handed out one
// caller at a time.
//
// How values come back with pg's default settings:
// - `bigint` (int8) and `numeric` are strings, exact ("9007199254740993"); `integer`, `smallint`,
//   `real` and `double precision` are numbers. `count(*)` is a bigint: a string.
// - `boolean` is a boolean.
// - `timestamptz` is a `Date` (the instant); `timestamp` (without time zone) is a `Date` read in
//   the process's time zone; `date` is a `Date` at local midnight; `time` and `interval` are
//   strings / pg's interval objects.
// - `json` and `jsonb` are parsed: objects, arrays, numbers, strings, booleans, null.
// - `bytea` is a Buffer (a Uint8Array).
// Parameters: a `Date` is sent as a timestamp with the local offset, a `Buffer` as bytea, an
// array as a PostgreSQL array, an object as its JSON, a bigint as its digits, `undefined` as NULL.
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import type { Datasource } from "./datasource.ts";
import { closedError } from "./acquire_within.ts";
import { PostgresClients } from "./postgres_clients.ts";
import type { DataConnection, DataPool, PoolOpener } from "./data_pool.ts";
import { DataError, messageOf, withoutValues } from "./data_error.ts";
import { ServerPool } from "./server_pool.ts";
import { POSTGRES } from "./postgres_dialect.ts";
import type { MigrationSession, ResolvedPoolSettings } from "./pool_settings.ts";
import { type PgError, PostgresConnection, Session } from "./postgres_connection.ts";
import { definedFields } from "../defined_fields.ts";

/** Opens the pool of a PostgreSQL datasource; nothing connects before the first call. */
export const openPostgresPool: PoolOpener = (datasource, settings, migration) =>
  new PostgresPool(datasource, settings, migration);

class PostgresPool extends ServerPool<PgError> implements DataPool {
  readonly kind = "postgres" as const;
  protected readonly dialect = POSTGRES;
  readonly #idleTimeoutMs: number;
  /** The connections Thaw's calls take. */
  readonly #clients: PostgresClients<pg.Client>;
  /** pg.Pool over the same settings, made only where the app asks for the driver's own pool. */
  #native: pg.Pool | undefined;
  readonly #clientConfig: pg.ClientConfig;
  /** What is kept of each client's session. */
  readonly #sessions = new WeakMap<pg.Client, Session>();

  constructor(datasource: Datasource, s: ResolvedPoolSettings, migration?: MigrationSession) {
    super(datasource, s);
    this.#idleTimeoutMs = s.idleTimeoutMs;
    this.#clientConfig = {
      // Parsed here rather than passed as connectionString, which would override user/password.
      ...parseIntoClientConfig(datasource.location),
      ...definedFields({
        user: datasource.username,
        password: datasource.password,
        application_name: migration?.applicationName,
      }),
      // Each client's own bound on connecting; the wait for a free one is acquire-timeout's.
      connectionTimeoutMillis: s.connectTimeoutMs,
      // A server gone without a word (its host down, a network cut) ends an idle connection.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      // Sent with the startup message (each session's statement_timeout from its start): the
      // query timeout costs no statement of its own.
      ...definedFields({ statement_timeout: this.queryTimeoutMs }),
    };
    this.#clients = new PostgresClients<pg.Client>(
      { name: this.name, maxSize: s.maxSize, idleTimeoutMs: s.idleTimeoutMs },
      { open: this.#open, close: (client) => void client.end().catch(() => {}) },
    );
  }

  /**
   * The driver's own pool, `pg.Pool`, for what the client lacks: made on first use, over the same
   * settings and max-size, its connections its own (Thaw's calls never wait for them).
   */
  get native(): pg.Pool {
    if (this.#native === undefined) {
      const config = this.#clientConfig;
      const native = this.#native = new pg.Pool({
        // pg.Pool's connectionTimeoutMillis would bound the wait for a free client with it:
        // each client has its own instead.
        Client: class extends pg.Client {
          constructor() {
            super(config);
          }
        },
        max: this.maxSize,
        idleTimeoutMillis: this.#idleTimeoutMs,
      });
      // An idle client whose server went away: pg removes it; unheard, the event would crash.
      native.on("error", () => {});
      if (this.closed) void native.end();
    }
    return this.#native;
  }

  // A new connection, listened to for its life: an error while idle closes it, one while held
  // fails its next statement (see sessionOf); unheard, the event would crash the process.
  readonly #open = (): Promise<pg.Client> => {
    const client = new pg.Client(this.#clientConfig);
    client.on("error", () => this.#clients.lost(client));
    return new Promise((resolve, reject) =>
      client.connect((error: Error | undefined) => {
        if (!error) return resolve(client);
        client.end().catch(() => {});
        reject(
          this.connectError(error),
        );
      })
    );
  };

  async acquire(): Promise<DataConnection> {
    if (this.closed) throw closedError(this.name);
    // A connection that fails its check is closed (pg opens another in its place): each turn
    // takes one fewer old connection, so this ends with a checked or a new one. All of it within
    // acquire-timeout (HikariCP's rule): checks one after another, each waiting connect-timeout
    // on a database that stopped answering, would wait max-size times that.
    const deadline = performance.now() + this.acquireTimeoutMs;
    for (let left = this.acquireTimeoutMs; left > 0; left = deadline - performance.now()) {
      // An idle one no one waits before is taken at once, without a promise to wait on.
      const client = this.#clients.takeIdle() ??
        await this.#clients.acquire(left, this.acquireTimeoutMs);
      if (this.#usedLately(client) || await this.#alive(client, deadline)) {
        return new PostgresConnection(this, client);
      }
    }
    throw new DataError({
      datasource: this.name,
      reason: "timeout",
      message: `no connection was ready within ${this.acquireTimeoutMs} ms ` +
        "(pool.acquire-timeout): the idle ones did not answer their check, and were closed (does " +
        "the database answer?)",
    });
  }

  /** `client` given back: idle from now, or closed where `broken`. */
  giveBack(client: pg.Client, broken: boolean): void {
    this.#clients.release(client, broken);
  }

  /** What is kept of `client`'s session, listened to from its first call on. */
  sessionOf(client: pg.Client): Session {
    let session = this.#sessions.get(client);
    if (session === undefined) {
      const made = session = new Session();
      // An error while the client is out (the server ended the session) is kept: it fails the
      // next statement.
      // Listened to for the client's life rather than each time it is out: a listener added and
      // taken off cost each call as much as the rest of the hand-out.
      client.on("error", (error: PgError) => {
        made.lost ??= error;
        made.holder?.dropHeld(error);
      });
      made.late = () => {
        made.lost ??= new Error("the database did not answer a statement in time");
        made.holder?.dropHeld(made.lost);
        this.endSession(client);
      };
      this.#sessions.set(client, made);
    }
    return session;
  }

  // Used again at once, a connection is not checked (HikariCP's rule, and its 500 ms).
  #usedLately(client: pg.Client): boolean {
    const since = this.#clients.idleSince(client);
    return since === undefined || performance.now() - since <= CHECK_IDLE_AFTER_MS;
  }

  // A connection idle for a while may have died without a word (its server restarted, a
  // firewall dropped it): it answers an empty statement within connect-timeout, or is closed.
  async #alive(client: pg.Client, deadline: number): Promise<boolean> {
    const now = performance.now();
    const checkMs = Math.max(1, Math.min(this.connectTimeoutMs, deadline - now));
    try {
      await this.watch.within(
        "",
        { ms: checkMs, transaction: false },
        client.query(""),
        () => {},
      );
      return true;
    } catch {
      this.#clients.release(client, true);
      return false;
    }
  }

  /**
   * Ends the session `client` ran a statement its bound cut. PostgreSQL does not notice a closed
   * socket while it runs a statement (a lock wait, a long scan): the session would run on, its
   * transaction's locks held, until the statement ended of itself. Ended from another connection
   * (as JDBC's query timeout cancels), as its own user may; none is made for a database that
   * does not answer within connect-timeout, which ends the session once it notices the socket.
   */
  endSession(client: pg.Client): void {
    const pid = (client as { processID?: unknown }).processID;
    if (typeof pid !== "number") return;
    this.ending(this.#terminate(pid));
  }

  async #terminate(pid: number): Promise<void> {
    const client = new pg.Client({ ...this.#clientConfig, query_timeout: this.connectTimeoutMs });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT pg_terminate_backend($1)", [pid]);
    } finally {
      // Not waited on: a server that stopped answering would never acknowledge the end.
      client.end().catch(() => {});
    }
  }

  idleCount(): number {
    return this.#clients.idleCount;
  }

  // Waits for the clients held to be given back (pg's end of its own pool does too).
  protected async closeConnections(): Promise<void> {
    await Promise.all([this.#clients.close(), this.#native?.end()]);
  }

  // The values a statement was given put as `…`. Not the detail: it quotes a row's other columns
  // (`Failing row contains (…)`), a key as an index folded it (`Key (lower(email))=(…)`), bytes
  // as hex, none of which masking can find.
  describe(error: PgError, params: readonly unknown[] = []): string {
    const code = error.code && /^[0-9A-Z]{5}$/.test(error.code) ? ` (SQLSTATE ${error.code})` : "";
    return this.mask(withoutValues(`${messageOf(error)}${code}`, params));
  }

  // 57014 is also a cancel (pg_cancel_backend): only one not canceled "due to user request" was
  // stopped by the query timeout.
  protected timedOut(error: PgError): string | undefined {
    return error.code === "57014" && !/user request/i.test(messageOf(error)) ? "57014" : undefined;
  }
}

/** How long a connection may sit idle and be handed out unchecked (HikariCP's figure). */
const CHECK_IDLE_AFTER_MS = 500;

/** How long a connection stays idle before TCP keepalive probes ask whether its server is there. */
const KEEPALIVE_DELAY_MS = 10_000;
