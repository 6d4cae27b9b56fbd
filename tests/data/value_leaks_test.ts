// An attacker's cases for the masking of bound values in DataError messages (data_error.ts's
// withoutValues): values the database quotes back in a form other than the one bound.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, it } from "node:test";
import { inspect } from "node:util";
import { SqlClient } from "../../src/data/sql_client.ts";
import { loggable } from "../../src/observe/loggable.ts";
import { rejection, testPools } from "../sql/pools.ts";
import { SQLITE } from "../sqlite.ts";

describe("bound values in DataError messages", () => {
  const open = testPools();

  it("PostgreSQL: an email under a lower(email) unique index is not quoted back", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    await sql.unsafe("CREATE TABLE u (email TEXT NOT NULL)");
    await sql.unsafe("CREATE UNIQUE INDEX u_email ON u (lower(email))");
    await sql.execute`INSERT INTO u (email) VALUES (${"Victim.Person@Example.com"})`;
    const error = await rejection(
      sql.execute`INSERT INTO u (email) VALUES (${"Victim.Person@Example.com"})`,
    );
    assert.doesNotMatch(error.message, /victim\.person@example\.com/i, error.message);
  });

  // Node 20 has no SQLite: the case is the other runtimes'.
  if (SQLITE !== undefined) {
    it("SQLite: a value a trigger RAISEs in capitals is not quoted back", async () => {
      const sql = new SqlClient((await open("sqlite")).pool);
      await sql.unsafe("CREATE TABLE u (email TEXT)");
      await sql.unsafe(
        "CREATE TRIGGER u_refuse BEFORE INSERT ON u BEGIN " +
          "SELECT RAISE(ABORT, 'refused: ' || upper(NEW.email)); END",
      );
      const error = await rejection(
        sql.execute`INSERT INTO u (email) VALUES (${"victim@example.com"})`,
      );
      assert.doesNotMatch(error.message, /victim@example\.com/i, error.message);
    });
  }

  it("PostgreSQL: a bytea token (a Buffer) is not quoted back in hex", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    await sql.unsafe("CREATE TABLE t (token BYTEA PRIMARY KEY)");
    const token = Buffer.from("s3cret-session-token");
    await sql.execute`INSERT INTO t (token) VALUES (${token})`;
    const error = await rejection(sql.execute`INSERT INTO t (token) VALUES (${token})`);
    assert.ok(!error.message.includes(token.toString("hex")), error.message);
  });

  it("PostgreSQL: an element of an array parameter is not quoted back", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    const ids = ["reset-token-7f3a9c"];
    const error = await rejection(sql.query`SELECT ${ids}::uuid[] AS ids`);
    assert.ok(!error.message.includes(ids[0]), error.message);
  });

  it("PostgreSQL: a token inside a JSON text is not quoted back", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    const body = '{"password": hunter2secret}';
    const error = await rejection(sql.query`SELECT ${body}::jsonb AS j`);
    assert.ok(!error.message.includes("hunter2secret"), error.message);
  });

  it("PostgreSQL: a CHECK failure does not show the row's other, unbound columns", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    await sql.unsafe(
      "CREATE TABLE users (id INT PRIMARY KEY, name TEXT CHECK (name <> ''), password_hash TEXT)",
    );
    await sql.execute`INSERT INTO users VALUES (1, ${"Alice"}, ${"$2b$10$abcdefghijklmnopqrstuv"})`;
    const error = await rejection(sql.execute`UPDATE users SET name = ${""} WHERE id = ${1}`);
    assert.ok(!error.message.includes("$2b$10$abcdefghijklmnopqrstuv"), error.message);
  });

  it("MariaDB: a long duplicate value is not quoted back cut to its first characters", async () => {
    const sql = new SqlClient((await open("mysql")).pool);
    await sql.unsafe("CREATE TABLE t (token VARCHAR(200) NOT NULL UNIQUE)");
    const token = "0123456789abcdef".repeat(8);
    await sql.execute`INSERT INTO t (token) VALUES (${token})`;
    const error = await rejection(sql.execute`INSERT INTO t (token) VALUES (${token})`);
    assert.ok(!error.message.includes(token.slice(0, 40)), error.message);
  });
});

describe("bound values in the error log", () => {
  const open = testPools();

  it("a DataError as the logger prints it (stack and cause) does not show the value", async () => {
    const sql = new SqlClient((await open("postgres")).pool);
    await sql.unsafe("CREATE TABLE u (email TEXT PRIMARY KEY)");
    await sql.execute`INSERT INTO u (email) VALUES (${"victim@example.com"})`;
    const error = await rejection(
      sql.execute`INSERT INTO u (email) VALUES (${"victim@example.com"})`,
    );
    assert.ok(!error.message.includes("victim@example.com"), error.message);
    // What the default logger (console, through safeLogger) writes for a failed request.
    const printed = inspect(loggable(error), { depth: 8 });
    assert.ok(!printed.includes("victim@example.com"), printed);
  });
});
