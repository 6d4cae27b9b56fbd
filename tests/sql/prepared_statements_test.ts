import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { PREPARED_PER_CONNECTION, PreparedStatements } from "../../src/sql/prepared_statements.ts";
import { propertyOptions } from "../property.ts";
import fc from "fast-check";
import { rejection, testPools } from "./pools.ts";

describe("prepared_statements", () => {
  const open = testPools();

  // What the session of `sql`'s one connection keeps prepared, statements marked by `marker`.
  async function prepared(sql: SqlClient, marker: string) {
    return await sql.query<{ statement: string; runs: string }>`
      SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements
      WHERE statement LIKE ${`%${marker}%`} AND statement NOT LIKE '%pg_prepared_statements%'`;
  }

  it("a statement with values is parsed once per connection, then reused", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    for (const n of [1, 2, 3]) {
      assert.deepEqual(await sql.one`SELECT /* once */ ${n}::int AS n`, { n });
    }
    const rows = await prepared(sql, "/* once */");
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.equal(rows[0].runs, "3");
  });

  it("a connection keeps at most its bound of statements, the least recently used go", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const first = async () => await sql.one`SELECT /* bounded */ ${0}::int AS first`;
    await first();
    for (let i = 0; i < PREPARED_PER_CONNECTION + 20; i++) {
      const column = SqlClient.identifier(`c${i}`);
      assert.deepEqual(await sql.one`SELECT /* bounded */ ${i}::int AS ${column}`, {
        [`c${i}`]: i,
      });
    }
    // The session's whole count: the look below is a statement with a value too.
    const all = await sql.one`SELECT count(*)::int AS n FROM pg_prepared_statements`;
    assert.deepEqual(all, { n: PREPARED_PER_CONNECTION });
    const rows = await prepared(sql, "/* bounded */");
    assert.ok(!rows.some((row) => row.statement.includes("AS first")), "the oldest went");
    assert.deepEqual(await first(), { first: 0 }, "and it is prepared anew when used again");
  });

  // Statements sent at once in one transaction are all parsing when the later ones put the
  // first out: a name put out before its Parse was answered must be closed on the server too.
  it("statements put out while their own Parse is in flight are closed on the server", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const count = PREPARED_PER_CONNECTION + 20;
    const kept = await sql.transaction(async () => {
      const rows = await Promise.all(
        Array.from(
          { length: count },
          (_, i) => sql.one`SELECT /* at once */ ${i}::int AS ${SqlClient.identifier(`c${i}`)}`,
        ),
      );
      rows.forEach((row, i) => assert.deepEqual(row, { [`c${i}`]: i }));
      return await sql.one<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`;
    });
    assert.ok(kept.n <= PREPARED_PER_CONNECTION, `${kept.n} statements kept by the server`);
  });

  // The server may not have the name put out (a DEALLOCATE ALL the app ran; PgBouncer, which
  // renames prepared statements and passes DEALLOCATE on as it is): its forgetting must not fail
  // the transaction it happens in.
  it("a statement put out inside a transaction never aborts it, whatever the server still has", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const rows = await sql.transaction(async () => {
      for (let i = 0; i < PREPARED_PER_CONNECTION; i++) {
        await sql.one`SELECT /* filled */ ${i}::int AS ${SqlClient.identifier(`c${i}`)}`;
      }
      await sql.execute`DEALLOCATE ALL`;
      // Each puts out the oldest name, which the server no longer has.
      const fresh = [];
      for (const n of [1, 2, 3]) fresh.push(await sql.one`SELECT /* fresh */ ${n}::int AS n`);
      return fresh;
    });
    assert.deepEqual(rows, [{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  // A stale plan inside a transaction aborts it: the name is put out even so, not left on the
  // server until the session ends.
  it("a statement put out in an aborted transaction is forgotten by the server too", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE changing (id int PRIMARY KEY, a int)`;
    const read = () => sql.maybeOne`SELECT /* stale */ * FROM changing WHERE id = ${1}`;
    await read();
    await sql.execute`ALTER TABLE changing ADD COLUMN b int`;
    await rejection(sql.transaction(() => read()));
    await read();
    assert.equal((await prepared(sql, "/* stale */")).length, 1);
  });

  it("a statement that failed to parse works once what it needs exists", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    const read = () => sql.maybeOne`SELECT v FROM later WHERE id = ${1}`;
    assert.match((await rejection(read())).message, /later/);
    await sql.execute`CREATE TABLE later (id int PRIMARY KEY, v text)`;
    await sql.execute`INSERT INTO later VALUES (${1}, ${"a"})`;
    assert.deepEqual(await read(), { v: "a" });
  });

  // A cursor's DECLARE names its cursor anew each time: prepared, each stream would take a name
  // and push a statement worth keeping out of the bound.
  it("a stream's statements are not kept prepared", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    for (const n of [1, 2, 3]) {
      for await (const _ of sql.stream`SELECT /* streamed */ ${n}::int AS n`) { /* read */ }
    }
    assert.deepEqual(await prepared(sql, "/* streamed */"), []);
  });

  it("a statement whose table changed its columns is prepared anew, outside a transaction", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE changing (id int PRIMARY KEY, a int)`;
    await sql.execute`INSERT INTO changing VALUES (${1}, ${2})`;
    const read = () => sql.one`SELECT * FROM changing WHERE id = ${1}`;
    assert.deepEqual(await read(), { id: 1, a: 2 });
    await sql.execute`ALTER TABLE changing ADD COLUMN b int`;
    assert.deepEqual(await read(), { id: 1, a: 2, b: null });
  });

  it("inside a transaction the changed table fails that call; the next works", async () => {
    const { pool } = await open("postgres", { maxSize: 1 });
    const sql = new SqlClient(pool);
    await sql.execute`CREATE TABLE changing (id int PRIMARY KEY, a int)`;
    await sql.execute`INSERT INTO changing VALUES (${1}, ${2})`;
    const read = () => sql.one`SELECT * FROM changing WHERE id = ${1}`;
    await read();
    await sql.execute`ALTER TABLE changing ADD COLUMN b int`;
    // Its transaction is aborted by the failure: the statement cannot be run again in it.
    const error = await rejection(sql.transaction(() => read()));
    assert.match(error.message, /cached plan must not change result type/);
    assert.deepEqual(await sql.transaction(() => read()), { id: 1, a: 2, b: null });
  });
});

describe("PreparedStatements", () => {
  it("gives one name a text while it is kept, a new one after it went, never a name twice", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 60 }),
        (limit, uses) => {
          const statements = new PreparedStatements(limit);
          const named = new Map<string, string>();
          const given = new Set<string>();
          for (const use of uses) {
            const text = `SELECT ${use}`;
            const { name, evicted } = statements.name(text);
            if (evicted !== undefined) {
              for (const [t, n] of named) if (n === evicted) named.delete(t);
            }
            if (named.has(text)) assert.equal(name, named.get(text));
            else {
              assert.ok(!given.has(name), `${name} given twice`);
              given.add(name);
              named.set(text, name);
            }
            assert.ok(named.size <= limit);
          }
        },
      ),
      propertyOptions(),
    );
  });

  it("puts out the least recently used text, as a list moved on each use would", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 60 }),
        (limit, uses) => {
          const statements = new PreparedStatements(limit);
          const order: string[] = []; // the model: least recently used first
          const names = new Map<string, string>();
          for (const use of uses) {
            const text = `SELECT ${use}`;
            const kept = order.indexOf(text);
            if (kept !== -1) order.splice(kept, 1);
            order.push(text);
            const oldest = order.length > limit ? order.shift()! : undefined;
            const { name, evicted } = statements.name(text);
            names.set(text, name);
            assert.equal(evicted, oldest === undefined ? undefined : names.get(oldest), text);
          }
        },
      ),
      propertyOptions(),
    );
  });
});
