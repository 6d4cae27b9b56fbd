import { Autowired, Component, Scheduled, SchedulerLock } from "../../../mod.ts";
import { DataError, type SqlClient } from "../../../data.ts";
import type { User, UserInput } from "../src/user.ts";
import { DuplicateEmailError, toUser, UserRepository } from "../src/user_repository.ts";

type Row = { id: unknown; name: unknown; email: unknown };

// The ids the table can hold on both databases (PostgreSQL's INTEGER); one past them names no
// user, rather than a statement PostgreSQL refuses (numeric value out of range, a 500).
const isId = (id: number) => Number.isInteger(id) && id >= 1 && id <= 2_147_483_647;

/**
 * Users in the `users` table of the `users` datasource (SQLite by default, PostgreSQL with the
 * `postgres` profile), through its `SqlClient`: every value a bound parameter, SQL that both
 * databases run. The unique index on `email` decides a taken email, so two requests racing for
 * one email cannot both win. Registered by main.ts, outside `src/`, so that component scanning
 * never puts it beside the memory storage of the workers.
 */
@Component("userRepository")
export class SqlUserRepository extends UserRepository {
  @Autowired("users")
  private sql!: SqlClient;

  async findAll(): Promise<User[]> {
    const rows = await this.sql.query<Row>`SELECT id, name, email FROM users ORDER BY id`;
    return rows.map(toUser);
  }

  async findById(id: number): Promise<User | undefined> {
    if (!isId(id)) return undefined;
    return found(await this.sql.maybeOne<Row>`SELECT id, name, email FROM users WHERE id = ${id}`);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    return found(
      await this.sql.maybeOne<Row>`SELECT id, name, email FROM users WHERE email = ${email}`,
    );
  }

  async insert(input: UserInput): Promise<User> {
    const { name, email } = input;
    try {
      const row = await this.sql.one<Row>`
        INSERT INTO users (name, email) VALUES (${name}, ${email}) RETURNING id, name, email`;
      return toUser(row);
    } catch (error) {
      throw takenEmail(error, email);
    }
  }

  async update(id: number, input: UserInput): Promise<User | undefined> {
    if (!isId(id)) return undefined;
    const { name, email } = input;
    try {
      const row = await this.sql.maybeOne<Row>`
        UPDATE users SET name = ${name}, email = ${email} WHERE id = ${id}
        RETURNING id, name, email`;
      return found(row);
    } catch (error) {
      throw takenEmail(error, email);
    }
  }

  async delete(id: number): Promise<boolean> {
    if (!isId(id)) return false;
    return (await this.sql.execute`DELETE FROM users WHERE id = ${id}`).rowsAffected > 0;
  }

  /**
   * The nightly upkeep SQLite advises for connections that stay open: `PRAGMA optimize` refreshes
   * the query planner's statistics of the tables that changed. Locked, so that two instances of
   * the app on one database do not both run it. On PostgreSQL it does nothing: the server's
   * autovacuum daemon already analyzes the tables that changed, without being asked. (Not
   * `VACUUM` on SQLite: Deno's `node:sqlite` refuses it without `-A`, since it attaches a database
   * of its own.)
   */
  @Scheduled({ cron: "${app.users.upkeep-cron:0 0 3 * * *}" })
  @SchedulerLock({ name: "users.upkeep", lockAtMostFor: "10m", lockAtLeastFor: "1m" })
  async upkeep(): Promise<void> {
    if (this.sql.kind !== "sqlite") return;
    // 0x10002: every table, and ANALYZE where it helps (a table never analyzed, first of all).
    await this.sql.unsafe("PRAGMA optimize=0x10002");
  }
}

function found(row: Row | undefined): User | undefined {
  return row === undefined ? undefined : toUser(row);
}

/**
 * The unique index's refusal as the app's own error; any other error as it is. Each database says
 * so with its own code (PostgreSQL's SQLSTATE 23505, SQLite's SQLITE_CONSTRAINT_UNIQUE), and the
 * index on email is the table's only unique one. Not the message: it names the index, but a value
 * the statement was given is put as … there, and a user may be named "users_email".
 */
function takenEmail(error: unknown, email: string): unknown {
  if (!(error instanceof DataError) || error.reason !== "statement") return error;
  const taken = error.code === "23505" || error.code === "SQLITE_CONSTRAINT_UNIQUE";
  return taken ? new DuplicateEmailError(email) : error;
}
