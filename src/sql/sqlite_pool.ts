// SQLite's pool: the runtime's built-in SQLite (`node:sqlite` on Deno and Node 22.13+,
// `bun:sqlite` on Bun), whose handles are synchronous and used by one caller at a time. A file
// gets up to maxSize handles; `:memory:` exactly one, since each handle of it would be a database
// of its own. Each handle waits busyTimeoutMs for another handle's (or process's) write lock.
//
// How values come back:
// - `INTEGER` is a number. Beyond Number.MAX_SAFE_INTEGER, reading it throws on Deno and Node
//   (ERR_OUT_OF_RANGE) and loses precision on Bun: keep such keys as TEXT, or use the native
//   handle with bigints.
// - `TEXT` with a NUL character: stored whole everywhere, but Deno's node:sqlite reads it only
//   up to the NUL (Deno 2.x; Bun and Node read it whole). Keep such data in a BLOB on Deno.
// - `REAL` is a number, `TEXT` a string, `BLOB` a Uint8Array (a Buffer on Node), NULL null.
// - There is no boolean type: a boolean parameter is stored as 1 or 0 and comes back a number.
// - There is no date type: a `Date` parameter is stored as its ISO 8601 text (UTC) and comes back
//   that string; `CURRENT_TIMESTAMP` gives `YYYY-MM-DD HH:MM:SS` (UTC).
// - JSON is text: `json_object(...)` and a JSON column come back as strings (JSON.parse them).
// `rowsAffected` of a statement that returns rows is their number, except for a read (SELECT,
// VALUES, PRAGMA, EXPLAIN, WITH): 0. `lastInsertId` is given after an INSERT or REPLACE (of several
// rows: the last row's key).
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { Datasource } from "./datasource.ts";
import { closedError, timeoutError } from "./acquire_within.ts";
import { sqliteCodeName } from "./sqlite_codes.ts";
import type { DataConnection, DataPool, PoolOpener, RowCursor } from "./data_pool.ts";
import { type StatementResult, STREAM_BATCH_ROWS } from "./data_pool.ts";
import { DataError, messageOf, withoutValues } from "./data_error.ts";
import { HeldConnections } from "./held_connections.ts";
import { WriterLock } from "./writer_lock.ts";
import type { ResolvedPoolSettings } from "./pool_settings.ts";
import { type SqlitePragma, sqlitePragmas } from "./sqlite_settings.ts";
import {
  type SqliteHandle,
  sqliteMessage,
  sqliteOpener,
  type SqliteRows,
} from "./sqlite_opener.ts";
import { leadingKeyword } from "./leading_keyword.ts";

/** Opens the pool of a SQLite datasource; the file is opened (and its folder made) on first use. */
export const openSqlitePool: PoolOpener = (datasource, settings) =>
  new SqlitePool(datasource, settings);

interface Waiter {
  resolve(handle: SqliteHandle): void;
  reject(error: Error): void;
}

/** The pool's state, given to `native`: what a caller needs to share its handles is acquire. */
class SqlitePool implements DataPool {
  readonly kind = "sqlite" as const;
  readonly name: string;
  readonly #location: string;
  readonly #settings: ResolvedPoolSettings;
  readonly maxSize: number;
  /** Handles given back, the longest idle first, each with when it was given back. */
  readonly #idle: { handle: SqliteHandle; since: number }[] = [];
  #sweep: ReturnType<typeof setTimeout> | undefined;
  readonly #waiters: Waiter[] = [];
  #open = 0;
  #closed = false;
  readonly #held = new HeldConnections();
  #opener: Promise<(path: string) => SqliteHandle> | undefined;
  readonly #writer = new WriterLock();
  readonly #pragmas: readonly SqlitePragma[];

  constructor(datasource: Datasource, settings: ResolvedPoolSettings) {
    this.name = datasource.name;
    this.#location = datasource.location;
    this.#settings = settings;
    this.#pragmas = sqlitePragmas(settings.sqlite, this.#location);
    this.maxSize = this.#location === ":memory:" ? 1 : this.#settings.maxSize;
  }

  idleCount(): number {
    return this.#idle.length;
  }

  /** The pool itself: SQLite has no driver pool, and its handles are had through `acquire`. */
  get native(): DataPool {
    return this;
  }

  acquire(): Promise<DataConnection> {
    // An idle handle is handed out without an await: most calls find one.
    const idle = this.#closed ? undefined : this.#idle.pop();
    if (idle !== undefined) {
      this.#held.take();
      return Promise.resolve(new SqliteConnection(this, idle.handle));
    }
    return this.#take().then((handle) => {
      this.#held.take();
      return new SqliteConnection(this, handle);
    });
  }

  async #take(): Promise<SqliteHandle> {
    if (this.#closed) throw closedError(this.name);
    if (this.#open < this.maxSize) {
      this.#open++;
      try {
        return await this.#openHandle();
      } catch (error) {
        this.#open--;
        this.#serveNext();
        throw error;
      }
    }
    return await new Promise<SqliteHandle>((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(timeoutError(this.name, this.#settings.acquireTimeoutMs));
      }, this.#settings.acquireTimeoutMs);
      const waiter: Waiter = {
        resolve: (handle) => {
          clearTimeout(timer);
          resolve(handle);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /**
   * Gives a handle back: to the first caller waiting, else to the idle ones. A broken one is
   * closed, but for `:memory:`, whose one handle is the database itself.
   */
  give(handle: SqliteHandle, broken: boolean): void {
    this.#held.give();
    if ((broken && this.#location !== ":memory:") || this.#closed) {
      this.#open--;
      closeQuietly(handle);
      this.#serveNext();
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve(handle);
      return;
    }
    this.#idle.push({ handle, since: Date.now() });
    // `:memory:` is never closed for being idle: its data would go with it.
    if (this.#location !== ":memory:" && this.#sweep === undefined) {
      this.#armSweep(this.#settings.idleTimeoutMs);
    }
  }

  // One timer for all idle handles (one per release would cost more than the statement).
  #armSweep(ms: number): void {
    this.#sweep = setTimeout(() => {
      this.#sweep = undefined;
      const now = Date.now();
      const limit = this.#settings.idleTimeoutMs;
      for (let first = this.#idle[0]; first !== undefined; first = this.#idle[0]) {
        if (now - first.since < limit) break;
        this.#idle.shift();
        this.#open--;
        closeQuietly(first.handle);
      }
      if (this.#idle.length > 0) this.#armSweep(this.#idle[0].since + limit - now);
    }, ms);
    unref(this.#sweep);
  }

  // A slot freed (a handle closed): a waiter gets a new handle.
  #serveNext(): void {
    const waiter = this.#waiters.shift();
    if (waiter === undefined) return;
    this.#open++;
    this.#openHandle().then(waiter.resolve, (error) => {
      this.#open--;
      waiter.reject(error);
    });
  }

  async #openHandle(): Promise<SqliteHandle> {
    try {
      const open = await (this.#opener ??= sqliteOpener());
      // A missing folder is a mistyped path far more often than one to make: SQLite makes the
      // file, never its folder, as every SQLite tool does.
      const missing = this.#location === ":memory:"
        ? undefined
        : await missingFolder(dirname(this.#location));
      if (missing !== undefined) {
        throw new Error(`its folder ${missing} does not exist (is the datasource's url right?)`);
      }
      const handle = open(this.#location);
      try {
        handle.run(`PRAGMA busy_timeout = ${Math.round(this.#settings.busyTimeoutMs)}`, []);
        this.#configure(handle);
      } catch (error) {
        closeQuietly(handle);
        throw error;
      }
      return handle;
    } catch (error) {
      throw new DataError({
        datasource: this.name,
        reason: "connect",
        message: `cannot open ${this.#location}: ${messageOf(error)}`,
      }, { cause: error });
    }
  }

  // The pool's pragmas (sqlite_settings.ts). Unless another journal is asked, WAL: readers and
  // the one writer never wait for each other (a read-only transaction held across awaits would
  // otherwise make every writer's commit wait in SQLite's busy loop, which stops the thread). It
  // stays set in the file, as SQLite means it to. A file SQLite cannot switch (read-only) stays
  // as it is, reads still served; a journal asked for and not had fails the connection.
  #configure(handle: SqliteHandle): void {
    for (const { text, expect, key, optional } of this.#pragmas) {
      let rows: readonly Record<string, unknown>[];
      try {
        rows = handle.run(text, []).rows;
      } catch (error) {
        if (optional) continue;
        throw key === undefined
          ? error
          : new Error(`${key} ${expect?.toUpperCase()}: ${messageOf(error)}`);
      }
      const mode = rows[0]?.journal_mode;
      if (expect !== undefined && mode !== expect) {
        throw new Error(`${key} ${expect.toUpperCase()}: SQLite kept ${String(mode)}`);
      }
    }
  }

  /**
   * Takes the pool's write lock for `text` (a write outside a transaction, or a transaction's
   * BEGIN IMMEDIATE), waiting up to the busy timeout as SQLite itself would, and failing as it
   * would: `SQLITE_BUSY`, the code of a write that waited out busy_timeout for another process,
   * so that a caller tells a lock wait apart the same way whoever held the lock.
   */
  lockWriter(text: string): Promise<void> {
    const ms = this.#settings.busyTimeoutMs;
    return this.#writer.acquire(ms, () =>
      new DataError({
        datasource: this.name,
        reason: "statement",
        code: "SQLITE_BUSY",
        statement: text,
        message: `database is locked: the pool's write lock stayed held for the busy timeout ` +
          `(${ms} ms), by another write or writing transaction; a REQUIRES_NEW or NOT_SUPPORTED ` +
          "write inside a writing transaction waits for that transaction, which cannot end first",
      }));
  }

  /** Gives the write lock back. */
  unlockWriter(): void {
    this.#writer.release();
  }

  /**
   * The driver's error as a DataError naming the datasource and the statement; not as its cause,
   * which a logger prints, values and all.
   */
  statementError(error: unknown, text: string, params: readonly unknown[]): DataError {
    // node:sqlite's `errcode`, Bun's `errno`: the number, named the same on every runtime.
    const { errcode, errno } = error as { errcode?: unknown; errno?: unknown };
    const number = typeof errcode === "number" ? errcode : errno;
    const code = typeof number === "number" ? sqliteCodeName(number) : undefined;
    return new DataError({
      datasource: this.name,
      reason: "statement",
      statement: text,
      // SQLite's own messages quote no value; a trigger's RAISE may, anywhere in its text.
      message: withoutValues(
        sqliteMessage(error),
        params,
        "anywhere",
      ),
      ...(typeof code === "string" ? { code } : {}),
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(closedError(this.name));
    clearTimeout(this.#sweep);
    this.#sweep = undefined;
    for (const { handle } of this.#idle.splice(0)) {
      this.#open--;
      closeQuietly(handle);
    }
    // Handles still held close when they are given back.
    await this.#held.none();
  }
}

// Writes take the pool's write lock (see writer_lock.ts): one outside a transaction for itself,
// a writing transaction from its BEGIN IMMEDIATE to its end. Reads and read-only transactions do
// not: a file is in WAL mode, where a reader never holds a writer back.
class SqliteConnection implements DataConnection {
  readonly #pool: SqlitePool;
  readonly #handle: SqliteHandle;
  #released = false;
  /** Within BEGIN ... COMMIT or ROLLBACK. */
  #inTransaction = false;
  /** Holds the pool's write lock. */
  #writing = false;

  constructor(pool: SqlitePool, handle: SqliteHandle) {
    this.#pool = pool;
    this.#handle = handle;
  }

  run(text: string, params: readonly unknown[]): Promise<StatementResult> {
    if (this.#inTransaction || onlyReads(text)) return this.#exec(text, params);
    return this.#pool.lockWriter(text).then(() => {
      try {
        return this.#exec(text, params);
      } finally {
        this.#pool.unlockWriter();
      }
    });
  }

  #exec(text: string, params: readonly unknown[]): Promise<StatementResult> {
    if (this.#released) {
      return Promise.reject(new Error("a released SQLite connection was used"));
    }
    try {
      return Promise.resolve(this.#handle.run(text, params));
    } catch (error) {
      return Promise.reject(this.#pool.statementError(error, text, params));
    }
  }

  // The driver's iterator, a batch of rows stepped at a time. A writing statement outside a
  // transaction holds the write lock until the iteration ends, as a write does for its run.
  async cursor(text: string, params: readonly unknown[]): Promise<RowCursor> {
    if (this.#released) throw new Error("a released SQLite connection was used");
    const writes = !this.#inTransaction && !onlyReads(text);
    if (writes) await this.#pool.lockWriter(text);
    let rows: SqliteRows;
    try {
      rows = this.#handle.iterate(text, params);
    } catch (error) {
      if (writes) this.#pool.unlockWriter();
      throw this.#pool.statementError(error, text, params);
    }
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      try {
        rows.close();
      } finally {
        if (writes) this.#pool.unlockWriter();
      }
    };
    return {
      next: () => {
        const batch: Record<string, unknown>[] = [];
        if (closed) return Promise.resolve(batch);
        try {
          for (let i = 0; i < STREAM_BATCH_ROWS; i++) {
            const row = rows.next();
            if (row === undefined) {
              // Read to its end: the statement and the lock are let go before the last batch.
              close();
              break;
            }
            batch.push(row);
          }
        } catch (error) {
          try {
            close();
          } catch {
            // the statement's own failure is the one to give
          }
          return Promise.reject(this.#pool.statementError(error, text, params));
        }
        return Promise.resolve(batch);
      },
      close: () => {
        try {
          close();
          return Promise.resolve();
        } catch (error) {
          return Promise.reject(this.#pool.statementError(error, text, params));
        }
      },
    };
  }

  async control(text: string): Promise<void> {
    const keyword = leadingKeyword(text).toUpperCase();
    if (keyword === "BEGIN") {
      if (/^BEGIN\s+IMMEDIATE/i.test(text)) {
        await this.#pool.lockWriter(text);
        this.#writing = true;
      }
      try {
        await this.#exec(text, []);
      } catch (error) {
        this.#unlock();
        throw error;
      }
      this.#inTransaction = true;
      return;
    }
    await this.#exec(text, []);
    // A COMMIT that failed may leave the transaction open: the handle is closed when released.
    if ((keyword === "COMMIT" || keyword === "ROLLBACK") && !/\bTO\b/i.test(text)) {
      this.#inTransaction = false;
      this.#unlock();
    }
  }

  #unlock(): void {
    if (!this.#writing) return;
    this.#writing = false;
    this.#pool.unlockWriter();
  }

  release(broken = false): void {
    if (this.#released) return;
    this.#released = true;
    // A transaction left open (its COMMIT refused): rolled back here, so that the handle (for
    // :memory:, the database itself) serves the next caller; closed if even that fails.
    let close = broken;
    if (this.#inTransaction) {
      try {
        this.#handle.run("ROLLBACK", []);
        this.#inTransaction = false;
      } catch {
        close = true;
      }
    }
    this.#unlock();
    this.#pool.give(this.#handle, close);
  }
}

function closeQuietly(handle: SqliteHandle): void {
  try {
    handle.close();
  } catch {
    // Already closed.
  }
}

function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}

/**
 * Whether a statement outside a transaction only reads, so needs no write lock: a SELECT, VALUES
 * or EXPLAIN, a WITH that holds no write, a PRAGMA that sets nothing. Unsure is a write: the lock
 * costs a turn, a write without it can stall the thread in SQLite's busy loop.
 */
function onlyReads(text: string): boolean {
  const keyword = leadingKeyword(text).toUpperCase();
  if (keyword === "SELECT" || keyword === "VALUES" || keyword === "EXPLAIN") return true;
  if (keyword === "WITH") return !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text);
  return keyword === "PRAGMA" && !text.includes("=");
}

// The outermost folder of `folder` that does not exist (itself, or one above it), if any.
async function missingFolder(folder: string): Promise<string | undefined> {
  let missing: string | undefined;
  for (let at = folder; !(await exists(at)); at = dirname(at)) {
    missing = at;
    if (dirname(at) === at) break;
  }
  return missing;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return false;
    throw error;
  }
}
