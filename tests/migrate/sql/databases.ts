import { checkReport } from "../report_shape.ts";
import assert from "node:assert/strict";
import { after } from "node:test";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import mysql from "mysql2/promise";
import pg from "pg";
import { runCaptured } from "../run_cli.ts";
import { SQLITE } from "../../sqlite.ts";
import { suiteTempDirs } from "../../temp_dir.ts";
import type { RunReport } from "../../../src/migrate/run_report.ts";

/** The servers `tools/databases.sh start` runs (the README's test command starts them). */
export const POSTGRES_URL: string = process.env.POSTGRES_URL ?? "postgres://127.0.0.1:54329/thaw";
export const MARIADB_URL: string = process.env.MARIADB_URL ?? "mysql://127.0.0.1:33069/thaw";
export const DB_USER = "thaw";
/** Given to the runner only through `${THAW_TEST_DB_PASSWORD}`; no output may contain it. */
export const DB_PASSWORD: string = process.env.THAW_TEST_DB_PASSWORD ?? "thaw-secret";

export type Kind = "sqlite" | "postgres" | "mysql";
/**
 * The kinds this runtime can run: all three, except SQLite on Node before 22.13, which has no
 * built-in SQLite (sql_driver_test checks the runner's refusal there instead).
 */
export const KINDS: readonly Kind[] = SQLITE === undefined
  ? ["postgres", "mysql"]
  : ["sqlite", "postgres", "mysql"];

type Row = Record<string, unknown>;

/** A fresh database of one kind, and a way to look into it beside the runner. */
export interface TestDatabase {
  readonly url: string;
  query(sql: string): Promise<Row[]>;
  close(): Promise<void>;
}

// pg lets a connection string override user and password given beside it.
function withCredentials(url: string): string {
  const u = new URL(url);
  u.username = DB_USER;
  u.password = DB_PASSWORD;
  return u.href;
}

function unreachable(what: string, error: unknown): Error {
  // Never skip: a missing server is a failed run.
  return new Error(
    `${what} is not reachable: start it with tools/databases.sh start (npm test does this) ` +
      `(${(error as Error).message})`,
  );
}

/** Creates an empty database (a file, or a database on the test server). */
export async function createDatabase(kind: Kind, dir: string, id: string): Promise<TestDatabase> {
  if (kind === "sqlite") {
    const file = join(dir, "data", "app.db");
    const sqlite = SQLITE;
    if (sqlite === undefined) throw new Error("this runtime has no node:sqlite");
    let db: InstanceType<typeof sqlite.DatabaseSync> | undefined;
    // The folder made now, as an app's deployment makes it: the pool makes the file, not it.
    await mkdir(dirname(file), { recursive: true });
    const open = () => Promise.resolve(db ??= new sqlite.DatabaseSync(file));
    return {
      url: `sqlite:${file}`,
      query: async (sql) => (await open()).prepare(sql).all() as Row[],
      close: () => Promise.resolve(db?.close()),
    };
  }
  if (kind === "postgres") {
    const admin = new pg.Client({ connectionString: withCredentials(POSTGRES_URL) });
    try {
      await admin.connect();
    } catch (error) {
      throw unreachable(`PostgreSQL at ${POSTGRES_URL}`, error);
    }
    await admin.query(`CREATE DATABASE ${id}`);
    await admin.end();
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${id}`;
    const client = new pg.Client({ connectionString: withCredentials(url.href) });
    await client.connect();
    return {
      url: url.href,
      query: async (sql) => (await client.query(sql)).rows,
      close: () => client.end(),
    };
  }
  const name = `thaw_${id}`;
  let admin;
  try {
    admin = await mysql.createConnection({
      uri: MARIADB_URL,
      user: DB_USER,
      password: DB_PASSWORD,
    });
  } catch (error) {
    throw unreachable(`MariaDB at ${MARIADB_URL}`, error);
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(MARIADB_URL);
  url.pathname = `/${name}`;
  const connection = await mysql.createConnection({
    uri: url.href,
    user: DB_USER,
    password: DB_PASSWORD,
  });
  return {
    url: url.href,
    query: async (sql) => (await connection.query(sql))[0] as Row[],
    close: () => connection.end(),
  };
}

/** The result of one CLI run. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  /** The `--json` report, when asked for. */
  readonly report?: RunReport;
}

/** A temporary config folder, migrations root and database for datasource `main`. */
export class SqlWorkspace {
  readonly root: string;
  readonly configDir: string;
  readonly db: TestDatabase;
  /** Every line any run printed, to check that the password never appears. */
  readonly printed: string[] = [];

  private constructor(base: string, db: TestDatabase) {
    this.root = join(base, "migrations");
    this.configDir = join(base, "config");
    this.db = db;
  }

  /** Makes the workspace in `base`, an empty folder. */
  static async create(
    kind: Kind,
    base: string,
    options: { password?: string } = {},
  ): Promise<SqlWorkspace> {
    const id = `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const ws = new SqlWorkspace(base, await createDatabase(kind, base, id));
    await mkdir(ws.configDir, { recursive: true });
    await writeFile(
      join(ws.configDir, "application.yml"),
      `datasource:\n${ws.datasource("main")}    migrations:\n      enabled: true\n`,
    );
    ws.#password = options.password ?? DB_PASSWORD;
    return ws;
  }

  #password = DB_PASSWORD;

  /** The password runs pass to the datasource through `${THAW_TEST_DB_PASSWORD}`. */
  get password(): string {
    return this.#password;
  }

  /** A `datasource:` list entry named `name` on this workspace's database, without `migrations`. */
  datasource(name: string): string {
    const credentials = this.db.url.startsWith("sqlite:")
      ? ""
      : `    username: ${DB_USER}\n    password: \${THAW_TEST_DB_PASSWORD}\n`;
    return `  - name: ${name}\n    url: ${this.db.url}\n${credentials}`;
  }

  /** Writes a migration file of datasource `main`. */
  async file(path: string, content: string | Uint8Array): Promise<void> {
    const file = join(this.root, "main", path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }

  /** Runs the CLI in-process (SQL is the default mode) with `args`. */
  async run(...args: string[]): Promise<Run> {
    const result: Run = await runCaptured(["-c", this.configDir, "--sqlPath", this.root, ...args], {
      env: (name) => name === "THAW_TEST_DB_PASSWORD" ? this.#password : process.env[name],
      identity: { host: "test", pid: process.pid, user: "tester" },
    });
    this.printed.push(result.out, result.err);
    // Every report a test reads is checked against the documented shape first.
    if (args.includes("--json")) {
      const report = JSON.parse(result.out);
      checkReport(report);
      return { ...result, report };
    }
    return result;
  }

  /** Runs and expects exit code 0. */
  async ok(...args: string[]): Promise<Run> {
    const run = await this.run(...args);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    return run;
  }

  /** Rows of a query on the database, beside the runner. */
  query(sql: string): Promise<Row[]> {
    return this.db.query(sql);
  }

  /** The number of rows of a table, or `undefined` when the table does not exist. */
  async count(table: string): Promise<number | undefined> {
    try {
      return Number((await this.db.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
    } catch {
      return undefined;
    }
  }
}

/**
 * Makes workspaces of one kind for the suite it is called in, and after the suite closes their
 * databases (an open connection would keep Node's test process alive), checks that no run printed
 * the password, which goes in through `${VAR}` only, and removes their folders.
 */
export function workspaces(kind: Kind): (options?: { password?: string }) => Promise<SqlWorkspace> {
  const opened: SqlWorkspace[] = [];
  after(async () => {
    for (const ws of opened) {
      for (const line of ws.printed) assert.ok(!line.includes(DB_PASSWORD), line);
      await ws.db.close();
    }
  });
  // Registered after the databases' closing, so that the folders go once they are closed.
  const folder = suiteTempDirs();
  return async (options) => {
    const ws = await SqlWorkspace.create(kind, await folder("thaw-sql-"), options);
    opened.push(ws);
    return ws;
  };
}
