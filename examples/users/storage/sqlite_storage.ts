import type { DatabaseSync, StatementSync } from "node:sqlite";
import {
  Bean,
  type Class,
  Configuration,
  type LockConfiguration,
  LockProvider,
  PreDestroy,
  Scheduled,
  SchedulerLock,
  type SimpleLock,
  Value,
} from "../../../mod.ts";
import { SqlLockProvider } from "../../../lock-sql.ts";
import type { User, UserInput } from "../src/user.ts";
import { DuplicateEmailError, toUser, UserRepository } from "../src/user_repository.ts";

// SQLite's extended result code for a UNIQUE constraint (the users.email index).
const SQLITE_CONSTRAINT_UNIQUE = 2067;

/**
 * Users in the `users` table of a SQLite database (migrations/users/), through the runtime's
 * built-in `node:sqlite` (Deno, Bun, Node 22.13+) and prepared statements. The unique index on
 * `email` decides a taken email, so two requests racing for one email cannot both win.
 */
export class SqliteUserRepository extends UserRepository {
  readonly #db: DatabaseSync;
  readonly #all: StatementSync;
  readonly #byId: StatementSync;
  readonly #byEmail: StatementSync;
  readonly #insert: StatementSync;
  readonly #update: StatementSync;
  readonly #delete: StatementSync;
  #open = true;

  /**
   * Opens the database file, which the migrations have made already. `node:sqlite` is imported
   * here, on first use, so a runtime without it fails with a message rather than at load time.
   * A write that finds the file locked by another connection (a migration run) waits up to
   * `busyTimeoutMs` (a whole number, 0 or more) for it before it fails with `database is locked`.
   */
  static async open(file: string, busyTimeoutMs: number): Promise<SqliteUserRepository> {
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(file);
    try {
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      return new SqliteUserRepository(db);
    } catch (error) {
      db.close();
      if (/no such table/.test(String(error))) {
        throw new Error(`${file} has no users table: run the migrations first (main.ts does)`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  private constructor(db: DatabaseSync) {
    super();
    this.#db = db;
    const columns = "id, name, email";
    this.#all = db.prepare(`SELECT ${columns} FROM users ORDER BY id`);
    this.#byId = db.prepare(`SELECT ${columns} FROM users WHERE id = ?`);
    this.#byEmail = db.prepare(`SELECT ${columns} FROM users WHERE email = ?`);
    this.#insert = db.prepare(
      `INSERT INTO users (name, email) VALUES (?, ?) RETURNING ${columns}`,
    );
    this.#update = db.prepare(
      `UPDATE users SET name = ?, email = ? WHERE id = ? RETURNING ${columns}`,
    );
    this.#delete = db.prepare("DELETE FROM users WHERE id = ?");
  }

  findAll(): Promise<User[]> {
    return Promise.resolve(this.#all.all().map((row) => toUser(row as Row)));
  }

  findById(id: number): Promise<User | undefined> {
    return Promise.resolve(found(this.#byId.get(id)));
  }

  findByEmail(email: string): Promise<User | undefined> {
    return Promise.resolve(found(this.#byEmail.get(email)));
  }

  insert(input: UserInput): Promise<User> {
    return write(input.email, () => toUser(this.#insert.get(input.name, input.email) as Row));
  }

  update(id: number, input: UserInput): Promise<User | undefined> {
    return write(input.email, () => found(this.#update.get(input.name, input.email, id)));
  }

  delete(id: number): Promise<boolean> {
    return Promise.resolve(Number(this.#delete.run(id).changes) > 0);
  }

  /**
   * The nightly upkeep SQLite advises for a connection that stays open: `PRAGMA optimize`
   * refreshes the query planner's statistics of the tables that changed. Locked, so that two
   * instances of the app on one file do not both run it. (Not `VACUUM`: Deno's `node:sqlite`
   * refuses it without `-A`, since it attaches a database of its own.)
   */
  @Scheduled({ cron: "${app.users.upkeep-cron:0 0 3 * * *}" })
  @SchedulerLock({ name: "users.upkeep", lockAtMostFor: "10m", lockAtLeastFor: "1m" })
  upkeep(): void {
    // 0x10002: every table, and ANALYZE where it helps (a table never analyzed, first of all).
    this.#db.exec("PRAGMA optimize=0x10002");
  }

  // Not a prepared statement: on a closed database SQLite's own reason is "database is not open",
  // which is what the health details should say.
  ping(): Promise<void> {
    try {
      this.#db.exec("SELECT 1");
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  // Run by `app.close()` (after a graceful shutdown, too): the repository is the result of a
  // @Bean method, and the container stops those as it stops the beans it builds itself.
  @PreDestroy()
  override close(): void {
    if (this.#open) this.#db.close();
    this.#open = false;
  }
}

type Row = { id: unknown; name: unknown; email: unknown };

function found(row: unknown): User | undefined {
  return row === undefined ? undefined : toUser(row as Row);
}

// A write, with the unique index's refusal as the app's own error.
function write<T>(email: string, run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    const { errcode, message } = error as { errcode?: unknown; message?: unknown };
    if (errcode === SQLITE_CONSTRAINT_UNIQUE && /users\.email/.test(String(message))) {
      return Promise.reject(new DuplicateEmailError(email));
    }
    return Promise.reject(error);
  }
}

/**
 * The locks of the app's `@SchedulerLock` jobs, in the `shedlock` table of the same file
 * (migrations/users/002-create-shedlock.sql), on a connection of their own, closed with the app.
 */
class SqliteLocks extends LockProvider {
  readonly #db: DatabaseSync;
  readonly #locks: SqlLockProvider;

  constructor(db: DatabaseSync) {
    super();
    this.#db = db;
    this.#locks = SqlLockProvider.sqlite(db);
  }

  lock(config: LockConfiguration): Promise<SimpleLock | undefined> {
    return this.#locks.lock(config);
  }

  override check(config: LockConfiguration): void {
    this.#locks.check(config);
  }

  @PreDestroy()
  close(): void {
    this.#db.close();
  }
}

/**
 * The storage `main.ts` registers: a configuration whose bean `userRepository` is the users of the
 * SQLite database `file` (the `users` datasource's, as `readDatasource` reads it from
 * application.yml), waiting `app.users.busy-timeout-ms` for a locked file, and whose bean
 * `lockProvider` keeps the locks of its nightly upkeep in the same file. Kept out of `src/`, so
 * component scanning never registers it next to the memory storage of the workers.
 */
export function sqliteStorage(file: string): Class {
  @Configuration()
  class SqliteStorage {
    @Value("${app.users.busy-timeout-ms:5000}", { type: Number })
    private busyTimeoutMs!: number;

    @Bean("userRepository")
    userRepository(): Promise<UserRepository> {
      // @Value has made it a number; a PRAGMA takes no bound parameter, so it must be an integer.
      if (!Number.isSafeInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
        throw new RangeError(
          "app.users.busy-timeout-ms must be a whole number of milliseconds, 0 or more, got " +
            this.busyTimeoutMs,
        );
      }
      return SqliteUserRepository.open(file, this.busyTimeoutMs);
    }

    @Bean("lockProvider")
    async lockProvider(): Promise<LockProvider> {
      const { DatabaseSync } = await import("node:sqlite");
      const db = new DatabaseSync(file);
      db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
      return new SqliteLocks(db);
    }
  }
  return SqliteStorage;
}
