import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SqlClient } from "../../src/data/sql_client.ts";
import { fragment, SqlFragment } from "../../src/data/sql_template.ts";
import { DataError } from "../../src/sql/data_error.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import { propertyOptions } from "../property.ts";
import { type Kind, KINDS, rejection, testPools } from "../sql/pools.ts";
import { RUNTIME } from "../runtime.ts";
import { readFileSync } from "node:fs";

const ID: Record<Kind, string> = {
  sqlite: "id INTEGER PRIMARY KEY",
  postgres: "id SERIAL PRIMARY KEY",
  mysql: "id INT AUTO_INCREMENT PRIMARY KEY",
};
// Text that holds any character, NUL included where the database allows it.
const TEXT: Record<Kind, string> = {
  sqlite: "TEXT",
  postgres: "TEXT",
  mysql: "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
};
const NASTY = [
  "'",
  '"',
  "\\",
  "\\'",
  "''",
  "`",
  "'; DROP TABLE items; --",
  "$1",
  "?",
  "%",
  "_",
  "\r\n",
  "\u2603",
  "😀",
];

/** The cases: each database, and SQLite also in memory. */
type Case = { kind: Kind; memory: boolean; label: string };
const CASES: Case[] = KINDS.flatMap((kind): Case[] =>
  kind === "sqlite"
    ? [
      { kind, memory: false, label: "sqlite (file)" },
      { kind, memory: true, label: "sqlite (:memory:)" },
    ]
    : [{ kind, memory: false, label: kind }]
);

async function rejectsWith(
  promise: Promise<unknown>,
  check: (error: DataError) => void,
): Promise<void> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof DataError, `expected a DataError, got ${String(caught)}`);
  check(caught);
}

for (const { kind, memory, label } of CASES) {
  describe(`SqlClient on ${label}`, () => {
    const open = testPools();
    const client = async (settings = {}) => {
      const made = await open(kind, settings, { memory });
      const sql = new SqlClient(made.pool);
      // DDL that differs per database, written by the test: run as it is, on a connection.
      const connection = await made.pool.acquire();
      await connection.run(`CREATE TABLE items (${ID[kind]}, name ${TEXT[kind]})`, []);
      connection.release();
      return { ...made, sql };
    };

    it("names the datasource and kind, and gives the driver's pool", async () => {
      const { sql, pool, datasource } = await client();
      assert.equal(sql.name, datasource.name);
      assert.equal(sql.kind, kind);
      assert.equal(sql.pool, pool.native);
    });

    it("round-trips every character 1..255, quotes and backslashes as values", async () => {
      const { sql } = await client();
      const values = [
        ...Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)),
        ...NASTY,
        Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).join("") +
        NASTY.join(""),
      ];
      for (const value of values) await sql.execute`INSERT INTO items (name) VALUES (${value})`;
      const rows = await sql.query<{ name: string }>`SELECT name FROM items ORDER BY id`;
      assert.deepEqual(rows.map((r) => r.name), values);
      for (const value of NASTY) {
        const row = await sql.one<{ n: number | string }>`
          SELECT COUNT(*) AS n FROM items WHERE name = ${value}`;
        assert.equal(Number(row.n), values.filter((v) => v === value).length, value);
      }
    });

    it(
      kind === "postgres"
        ? "refuses NUL in text as the database's error, and round-trips it in bytea"
        : "round-trips NUL in a text parameter",
      async () => {
        const { sql } = await client();
        const all = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join("");
        if (kind === "postgres") {
          await rejectsWith(sql.execute`INSERT INTO items (name) VALUES (${"a\0b"})`, (e) => {
            assert.equal(e.reason, "statement");
            assert.match(e.message, /0x00/);
            assert.ok(!e.message.includes("a\0b"));
          });
          const bytes = new Uint8Array(256).map((_, i) => i);
          const row = await sql.one<{ b: Uint8Array }>`SELECT ${bytes}::bytea AS b`;
          assert.deepEqual([...row.b], [...bytes]);
          return;
        }
        await sql.execute`INSERT INTO items (name) VALUES (${"\0"})`;
        await sql.execute`INSERT INTO items (name) VALUES (${all})`;
        await sql.execute`INSERT INTO items (name) VALUES (${"a\0'b"})`;
        const expected = ["\0", all, "a\0'b"];
        // Stored whole, on every runtime: the bytes the database holds.
        const hex = await sql.query<{ h: string }>`SELECT HEX(name) AS h FROM items ORDER BY id`;
        assert.deepEqual(
          hex.map((r) => r.h.toUpperCase()),
          expected.map((v) => Buffer.from(v, "utf8").toString("hex").toUpperCase()),
        );
        const rows = await sql.query<{ name: string }>`SELECT name FROM items ORDER BY id`;
        // Deno's node:sqlite reads TEXT up to its first NUL (documented in sqlite_pool.ts).
        const read = RUNTIME === "deno" && kind === "sqlite"
          ? expected.map((v) => v.slice(0, v.indexOf("\0")))
          : expected;
        assert.deepEqual(rows.map((r) => r.name), read);
        assert.equal(
          (await sql.one<{ n: number }>`SELECT COUNT(*) AS n FROM items WHERE name = ${"a\0'b"}`).n,
          1,
        );
      },
    );

    it("one: exactly one row, else an error naming how many and the datasource", async () => {
      const { sql, datasource } = await client();
      await sql.execute`INSERT INTO items (name) VALUES (${"a"}), (${"b"})`;
      assert.deepEqual(
        await sql.one<{ name: string }>`SELECT name FROM items WHERE name = ${"a"}`,
        { name: "a" },
      );
      await rejectsWith(sql.one`SELECT name FROM items WHERE name = ${"secret-z"}`, (e) => {
        assert.equal(e.reason, "rows");
        assert.equal(e.datasource, datasource.name);
        assert.match(e.message, /expected exactly one row, got 0/);
        assert.match(e.message, new RegExp(`datasource "${datasource.name}"`));
        assert.match(e.message, /SELECT name FROM items WHERE name = (\$1|\?)/);
        assert.ok(!e.message.includes("secret-z"));
      });
      await rejectsWith(sql.one`SELECT name FROM items`, (e) => {
        assert.match(e.message, /expected exactly one row, got 2/);
      });
    });

    it("maybeOne: the row, undefined for none, an error for several", async () => {
      const { sql } = await client();
      await sql.execute`INSERT INTO items (name) VALUES (${"a"}), (${"b"})`;
      assert.deepEqual(await sql.maybeOne`SELECT name FROM items WHERE name = ${"b"}`, {
        name: "b",
      });
      assert.equal(await sql.maybeOne`SELECT name FROM items WHERE name = ${"c"}`, undefined);
      await rejectsWith(sql.maybeOne`SELECT name FROM items`, (e) => {
        assert.equal(e.reason, "rows");
        assert.match(e.message, /expected at most one row, got 2/);
      });
    });

    it("execute: rows affected, and the key inserted where the database says", async () => {
      const { sql } = await client();
      const inserted = await sql.execute`INSERT INTO items (name) VALUES (${"a"}), (${"b"})`;
      assert.equal(inserted.rowsAffected, 2);
      if (kind === "postgres") assert.equal(inserted.lastInsertId, undefined);
      else {
        const one = await sql.execute`INSERT INTO items (name) VALUES (${"c"})`;
        assert.equal(Number(one.lastInsertId), 3);
      }
      const updated = await sql.execute`UPDATE items SET name = ${"x"} WHERE name <> ${"c"}`;
      assert.deepEqual(updated, { rowsAffected: 2 });
      const none = await sql.execute`DELETE FROM items WHERE name = ${"nothing"}`;
      assert.deepEqual(none, { rowsAffected: 0 });
      assert.deepEqual(await sql.execute`SELECT * FROM items`, { rowsAffected: 0 });
    });

    it("puts identifiers and fragments in the text, their values bound", async () => {
      const { sql } = await client();
      await sql.execute`INSERT INTO items (name) VALUES (${"a"}), (${"b"}), (${"c"})`;
      const conditions = [SqlClient.fragment`name <> ${"a"}`, SqlClient.fragment`name <> ${"c"}`];
      const rows = await sql.query`SELECT ${SqlClient.join([SqlClient.identifier("name")])} FROM ${
        SqlClient.identifier("items")
      } WHERE ${SqlClient.join(conditions, SqlClient.fragment` AND `)}`;
      assert.deepEqual(rows, [{ name: "b" }]);
    });

    it("a statement the database refuses names the datasource and its first line, not the values", async () => {
      const { sql, datasource } = await client();
      await rejectsWith(
        sql.query`SELECT nope FROM items\n WHERE name = ${"hunter2"}`,
        (e) => {
          assert.equal(e.reason, "statement");
          assert.equal(e.statement, "SELECT nope FROM items");
          assert.match(
            e.message,
            new RegExp(`^datasource "${datasource.name}": SELECT nope FROM items: `),
          );
          assert.ok(!e.message.includes("hunter2"));
        },
      );
      // The connection is fine: the next call works.
      assert.deepEqual(await sql.query`SELECT name FROM items`, []);
    });

    it("never quotes a value in its error, though the database quotes it back", async () => {
      const { sql } = await client();
      const secret = "hunter2-secret@example.com";
      await sql.unsafe(
        `CREATE UNIQUE INDEX items_name ON items (name${kind === "mysql" ? "(64)" : ""})`,
      );
      await sql.execute`INSERT INTO items (name) VALUES (${secret})`;
      // The unique index's refusal: PostgreSQL's detail and MySQL's message name the value.
      const duplicate = await rejection(sql.execute`INSERT INTO items (name) VALUES (${secret})`);
      assert.equal(duplicate.reason, "statement");
      assert.ok(!duplicate.message.includes(secret), duplicate.message);
      if (kind === "postgres") {
        // A value PostgreSQL cannot read as the column's type is in its message itself.
        const typed = await rejection(sql.query`SELECT * FROM items WHERE id = ${secret}`);
        assert.equal(typed.code, "22P02");
        assert.ok(!typed.message.includes(secret), typed.message);
      }
    });

    it("runs more calls at once than it has connections, each waiting its turn", async () => {
      const { sql } = await client({ maxSize: 2 });
      const names = Array.from({ length: 30 }, (_, i) => `n${i}`);
      await Promise.all(
        names.map((name) => sql.execute`INSERT INTO items (name) VALUES (${name})`),
      );
      const counts = await Promise.all(
        names.map((name) =>
          sql.one<{ n: number | string }>`SELECT COUNT(*) AS n FROM items WHERE name = ${name}`
        ),
      );
      assert.deepEqual(counts.map((c) => Number(c.n)), names.map(() => 1));
    });

    it("the pool's close waits for the connections held, then refuses calls", async () => {
      const { sql, pool, datasource } = await client();
      const held = await pool.acquire();
      let closed = false;
      const closing = pool.close().then(() => {
        closed = true;
      });
      // Still usable while held: the close waits for it.
      assert.equal((await held.run("SELECT 1 AS one", [])).rows.length, 1);
      assert.equal(closed, false);
      held.release();
      await closing;
      await rejectsWith(sql.query`SELECT 1`, (e) => {
        assert.equal(e.reason, "closed");
        assert.equal(e.datasource, datasource.name);
      });
    });

    it("a call that gets no connection in time rejects naming the datasource; nothing hangs", async () => {
      const { sql, pool, datasource } = await client({ maxSize: 1, acquireTimeoutMs: 200 });
      const held = await pool.acquire();
      await rejectsWith(sql.query`SELECT name FROM items`, (e) => {
        assert.equal(e.reason, "timeout");
        assert.equal(e.datasource, datasource.name);
        assert.match(e.message, /no connection was free within 200 ms/);
      });
      held.release();
      assert.deepEqual(await sql.query`SELECT name FROM items`, []);
    });
  });
}

// Values no database binds, or that the database of `kind` cannot: each would be stored as
// something else (NULL, 0, a function's source), shift the values after it (node:sqlite reads an
// object first as named parameters; Bun binds nothing), or fail with the driver's puzzle.
interface ValueKind {
  readonly name: string;
  readonly value: () => unknown;
  /** The databases that refuse it, with what the message says. */
  readonly refused: Partial<Record<Kind, RegExp>>;
}
const EVERYWHERE = (said: RegExp): Record<Kind, RegExp> => ({
  sqlite: said,
  postgres: said,
  mysql: said,
});
const UNBINDABLE: readonly ValueKind[] = [
  { name: "a function", value: () => () => 1, refused: EVERYWHERE(/is a function/) },
  { name: "a symbol", value: () => Symbol("s"), refused: EVERYWHERE(/is a symbol/) },
  { name: "NaN", value: () => NaN, refused: EVERYWHERE(/is NaN/) },
  { name: "an invalid Date", value: () => new Date(NaN), refused: EVERYWHERE(/invalid Date/) },
  { name: "a plain object", value: () => ({ a: 1 }), refused: { sqlite: /is a plain object/ } },
  { name: "an empty object", value: () => ({}), refused: { sqlite: /is a plain object/ } },
  { name: "an array", value: () => [1, 2], refused: { sqlite: /is an array/ } },
  // pg binds an array's items one by one (a function as its source, a promise as {}), mysql2 as
  // JSON (a function as null): an item is checked as a value is.
  {
    name: "an array holding a promise",
    value: () => [1, [2, Promise.resolve(3)]],
    refused: {
      sqlite: /is an array/,
      postgres: /, at \[1\]\[1\], is a Promise/,
      mysql: /, at \[1\]\[1\], is a Promise/,
    },
  },
  {
    name: "an array holding a function",
    value: () => [() => 1],
    refused: {
      sqlite: /is an array/,
      postgres: /, at \[0\], is a function/,
      mysql: /, at \[0\], is a function/,
    },
  },
  // pg binds each as its JSON: {} for a Map, a Set and a Promise (an await left out), `"x"`
  // with its quotes for new String("x"); mysql2 fails with Buffer.from's puzzle or the same.
  { name: "a Map", value: () => new Map([["a", 1]]), refused: EVERYWHERE(/is a Map/) },
  { name: "a Set", value: () => new Set([1]), refused: EVERYWHERE(/is a Set/) },
  {
    name: "a Promise",
    value: () => Promise.resolve(1),
    refused: EVERYWHERE(/is a Promise \(an await left out\?\)/),
  },
  {
    name: "a String object",
    value: () => new String("x"),
    refused: EVERYWHERE(/is a String object: bind its primitive/),
  },
  {
    name: "a Number object",
    value: () => new Number(1),
    refused: EVERYWHERE(/is a Number object: bind its primitive/),
  },
  {
    name: "a Boolean object",
    value: () => new Boolean(false),
    refused: EVERYWHERE(/is a Boolean object: bind its primitive/),
  },
  {
    name: "an ArrayBuffer",
    value: () => new Uint8Array([1]).buffer,
    refused: { sqlite: /is an ArrayBuffer/, postgres: /is an ArrayBuffer/ },
  },
  {
    name: "a bigint beyond 64 bits",
    value: () => 2n ** 63n,
    refused: { sqlite: /beyond SQLite's 64-bit integers/ },
  },
];

// The upsert clause docs/data.md shows for each database, run here as it is written there.
const UPSERT_ROW: Record<Kind, string> = {
  postgres: "| PostgreSQL",
  mysql: "| MariaDB, MySQL",
  sqlite: "| SQLite",
};
function upsertOfDocs(kind: Kind): string {
  const doc = readFileSync(new URL("../../docs/data.md", import.meta.url), "utf8");
  const line = doc.split("\n").find((l) => l.startsWith(UPSERT_ROW[kind]) && l.includes("UPDATE"));
  const clause = line === undefined ? undefined : /`([^`]*UPDATE[^`]*)`/.exec(line)?.[1];
  assert.ok(clause !== undefined, `docs/data.md has no upsert row for ${kind}`);
  return clause;
}

const COLUMNS: Record<Kind, string> = {
  postgres: "id INTEGER PRIMARY KEY, t TEXT, n DOUBLE PRECISION, b BOOLEAN, z TEXT, bytes BYTEA",
  mysql: `id INT PRIMARY KEY, t ${TEXT.mysql}, n DOUBLE, b BOOLEAN, z ${TEXT.mysql}, bytes BLOB`,
  sqlite: "id INTEGER PRIMARY KEY, t TEXT, n REAL, b INTEGER, z TEXT, bytes BLOB",
};
// Every character 0 to 255 and more of Unicode, but NUL where the database (PostgreSQL) refuses it
// in text or the runtime (Deno's SQLite) reads text only up to it.
const ALL_CHARACTERS = (kind: Kind) =>
  Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)).join("")
    .slice(kind === "postgres" || (kind === "sqlite" && RUNTIME === "deno") ? 1 : 0) +
  "\u2603\u00e9\u4e2d\ud83d\ude00\u{10ffff}";

for (const kind of KINDS) {
  describe(`SqlClient on ${kind}: values(), many rows in one statement`, () => {
    const open = testPools();
    const client = async () => {
      const made = await open(kind);
      const connection = await made.pool.acquire();
      await connection.run(`CREATE TABLE bulk (${COLUMNS[kind]})`, []);
      connection.release();
      return new SqlClient(made.pool);
    };

    it("inserts 1,000 rows in one statement and reads them back as they were", async () => {
      const sql = await client();
      const text = ALL_CHARACTERS(kind);
      // By code point: a cut inside a surrogate pair would be no text any database stores.
      const points = [...text];
      const rows = Array.from({ length: 1000 }, (_, i) => ({
        id: i,
        t: i === 0
          ? text
          : `${points.slice(i % points.length).join("")}${NASTY[i % NASTY.length]}${i}`,
        n: i % 7 === 0 ? -(i + 1) / 8 : i * 1.5,
        b: i % 2 === 0,
        z: i % 3 === 0 ? null : `z${i}`,
        bytes: new Uint8Array([i % 256, 255 - (i % 256), 0]),
      }));
      const result = await sql.execute`INSERT INTO bulk (id, t, n, b, z, bytes) VALUES ${
        sql.values(rows, "id", "t", "n", "b", "z", "bytes")
      }`;
      assert.equal(result.rowsAffected, 1000);
      const back = await sql.query<Record<string, unknown>>`
        SELECT id, t, n, b, z, bytes FROM bulk ORDER BY id`;
      // Booleans: PostgreSQL's own type; 1 and 0 on MariaDB and SQLite.
      const bool = (b: boolean) => kind === "postgres" ? b : b ? 1 : 0;
      assert.deepEqual(
        back.map((row) => ({ ...row, bytes: [...(row.bytes as Uint8Array)] })),
        rows.map((row) => ({ ...row, b: bool(row.b), bytes: [...row.bytes] })),
      );
    });

    it("upserts as the docs show for this database", async () => {
      const sql = await client();
      await sql.execute`INSERT INTO bulk (id, t) VALUES ${
        sql.values([{ id: 1, t: "pen" }, { id: 2, t: "ink" }], "id", "t")
      }`;
      // The docs' table has a column `count`; this one calls it `n`.
      const clause = new SqlFragment([upsertOfDocs(kind).replaceAll("count", "n")], []);
      await sql.execute`INSERT INTO bulk (id, t, n) VALUES ${
        sql.values([{ id: 2, t: "ink", n: 5 }, { id: 3, t: "nib", n: 1 }], "id", "t", "n")
      } ${clause}`;
      assert.deepEqual(await sql.query`SELECT id, t, n FROM bulk ORDER BY id`, [
        { id: 1, t: "pen", n: null },
        { id: 2, t: "ink", n: 5 },
        { id: 3, t: "nib", n: 1 },
      ]);
    });

    it("binds as many parameters as the database takes in one statement, and refuses one more", async () => {
      const sql = await client();
      const limit = { postgres: 65535, mysql: 65535, sqlite: 32766 }[kind];
      const rows = Array.from({ length: limit }, (_, i) => ({ id: i }));
      const result = await sql.execute`INSERT INTO bulk (id) VALUES ${sql.values(rows, "id")}`;
      assert.equal(result.rowsAffected, limit);
      const more = [...rows, { id: limit }];
      assert.throws(() => sql.values(more, "id"), {
        name: "RangeError",
        message: new RegExp(
          `^datasource "${kind}_main": values\\(\\): ${limit + 1} rows of 1 column are ${
            limit + 1
          } parameters, .*\\(${limit}\\): split the rows`,
        ),
      });
      // A statement past the limit however its parameters came: refused before it is sent.
      await assert.rejects(
        sql.execute`INSERT INTO bulk (id) VALUES ${sql.values(rows, "id")}, (${limit})`,
        {
          name: "RangeError",
          message: new RegExp(
            `^datasource "${kind}_main": INSERT INTO bulk .*: ${
              limit + 1
            } parameters, more than .* \\(${limit}\\): split the rows`,
          ),
        },
      );
      const count = await sql.one<{ n: number | string }>`SELECT COUNT(*) AS n FROM bulk`;
      assert.equal(Number(count.n), limit);
    });
  });
}

for (const kind of KINDS) {
  describe(`SqlClient on ${kind}: values it cannot bind`, () => {
    const open = testPools();
    const client = async () => {
      const made = await open(kind);
      const connection = await made.pool.acquire();
      await connection.run(
        `CREATE TABLE kept (a ${TEXT[kind]}, b ${TEXT[kind]}, c ${TEXT[kind]})`,
        [],
      );
      connection.release();
      return new SqlClient(made.pool);
    };

    it("refuses each with a TypeError naming its position, binding nothing", async () => {
      const sql = await client();
      for (const { name, value, refused } of UNBINDABLE) {
        const said = refused[kind];
        for (const at of [0, 1, 2]) {
          const values: unknown[] = ["one", "two", "three"];
          values[at] = value();
          const insert = sql.execute`INSERT INTO kept (a, b, c) VALUES (${values[0]}, ${
            values[1]
          }, ${values[2]})`;
          if (said === undefined) {
            // Bound as the database's driver binds it (pg's JSON, mysql2's bytes), the other
            // values each in their own column; or refused by the driver (mysql2 and a Map).
            try {
              await insert;
            } catch (error) {
              assert.ok(error instanceof DataError, `${name} at ${at + 1}: ${String(error)}`);
              assert.deepEqual(await sql.query`SELECT a FROM kept`, []);
              continue;
            }
            const row = await sql.one<Record<string, unknown>>`SELECT a, b, c FROM kept`;
            for (const i of [0, 1, 2].filter((i) => i !== at)) {
              assert.equal(row["abc"[i]], values[i], `${name} at ${at + 1}`);
            }
            await sql.execute`DELETE FROM kept`;
            continue;
          }
          await assert.rejects(insert, (error: unknown) => {
            assert.ok(error instanceof TypeError, `${name} at ${at + 1}: ${String(error)}`);
            assert.match(error.message, new RegExp(`^datasource "${kind}_main": INSERT INTO kept`));
            assert.match(error.message, new RegExp(`parameter ${at + 1}[ ,]`), name);
            assert.match(error.message, said, name);
            return true;
          });
        }
        // unsafe() binds as the tag does.
        if (said !== undefined) {
          await assert.rejects(sql.unsafe("SELECT 1 WHERE 1 = ?", [value()]), {
            name: "TypeError",
            message: said,
          });
        }
      }
      assert.deepEqual(await sql.query`SELECT a FROM kept`, []);
    });

    it("refuses a fragment or an identifier among unsafe()'s values, and names no refused value", async () => {
      const sql = await client();
      const ph = kind === "postgres" ? "$1" : "?";
      for (const value of [SqlClient.fragment`a = ${1}`, SqlClient.identifier("a")]) {
        await assert.rejects(sql.unsafe(`INSERT INTO kept (a) VALUES (${ph})`, [value]), {
          name: "TypeError",
          message:
            /parameter 1 is SQL, not a value: write it into a tag \(sql\.query`\.\.\. \$\{fragment\}`\)/,
        });
      }
      // A refused object of a class (SQLite binds none), whose own fields (a row's) hold what
      // the message must not show: its class is named, from its prototype.
      if (kind !== "sqlite") return;
      class Row {}
      const row = Object.assign(new Row(), { constructor: { name: "s3cret" }, then: "s3cret" });
      await assert.rejects(sql.execute`INSERT INTO kept (a) VALUES (${row})`, (error: unknown) => {
        assert.ok(error instanceof TypeError, String(error));
        assert.match(error.message, /parameter 1 is a Row, which SQLite cannot bind/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      });
    });

    it("refuses a template whose text has an escape JavaScript cannot read, naming where", async () => {
      const sql = await client();
      // A tagged template's piece with an invalid escape (\x not followed by two hex digits, \u,
      // an octal \1) has no text: the statement ran as `SELECT ?undefined`, the rest lost.
      const refused: [string, () => Promise<unknown>][] = [
        [" after value 1", async () => await sql.query`SELECT ${1} AS x, '\xZZ' AS v`],
        [
          " before value 1",
          async () => await sql.execute`UPDATE kept SET a = '\u{zz}' WHERE b = ${"b"}`,
        ],
        ["", async () => await sql.query`${SqlClient.fragment`SELECT '\xZZ' AS v`}`],
      ];
      for (const [where, call] of refused) {
        await assert.rejects(call(), {
          name: "TypeError",
          message: new RegExp(
            `^(datasource "${kind}_main": (query|execute)\\(\\)|fragment\\(\\)): the template's text` +
              `${where} has an escape JavaScript cannot read \\(\\\\x, \\\\u or \\\\1\\): write its ` +
              "backslash twice",
          ),
        });
      }
      // Escapes JavaScript reads are read as in any template.
      assert.deepEqual(await sql.query`SELECT ${"a"} AS x, '\x41' AS v`, [{ x: "a", v: "A" }]);
    });

    it("binds any other object as its JSON where objects are bound, as pg does", async () => {
      if (kind === "sqlite") return; // refused there (above)
      const sql = await client();
      // mysql2 sent a plain object and one with toJSON as JSON, and failed on the others with
      // Buffer.from's "The first argument must be of type string" (querystring.parse's objects
      // have no prototype).
      class Point {
        constructor(readonly x: number, readonly y: number) {}
      }
      const objects: [unknown, unknown][] = [
        [Object.assign(Object.create(null), { a: 1 }), { a: 1 }],
        [new Point(1, 2), { x: 1, y: 2 }],
        [{ nested: { list: [1, "two"] } }, { nested: { list: [1, "two"] } }],
      ];
      for (const [value, json] of objects) {
        await sql.execute`DELETE FROM kept`;
        await sql.execute`INSERT INTO kept (a, b) VALUES (${value}, ${"next"})`;
        const row = await sql.one<{ a: string; b: string }>`SELECT a, b FROM kept`;
        assert.deepEqual([JSON.parse(row.a), row.b], [json, "next"]);
      }
    });

    it("stores a typed array's or a DataView's bytes as a Uint8Array's, on every database", async () => {
      const made = await open(kind);
      const sql = new SqlClient(made.pool);
      await sql.unsafe(
        `CREATE TABLE bytes (n INTEGER, b ${kind === "postgres" ? "BYTEA" : "BLOB"})`,
      );
      const bytesOf = (
        view: ArrayBufferView,
      ) => [...new Uint8Array(view.buffer, view.byteOffset, view.byteLength)];
      // mysql2 took any view but a Buffer as an array of numbers, each cut to a byte (an
      // Int32Array's 256 stored as 0), and a DataView as no bytes at all.
      const views: ArrayBufferView[] = [
        new Int32Array([256, -1]),
        new Float64Array([1.5]),
        new BigInt64Array([2n ** 40n]),
        new Uint16Array([1, 2, 3]).subarray(1),
        new Uint8ClampedArray([255, 0]),
        new DataView(new Uint8Array([9, 8, 7, 6]).buffer, 1, 2),
        new Uint8Array([5, 6, 7]).subarray(1),
        Buffer.from([1, 2]),
      ];
      for (const [n, view] of views.entries()) {
        await sql.execute`INSERT INTO bytes (n, b) VALUES (${n}, ${view})`;
      }
      const rows = await sql.query<{ n: number; b: Uint8Array }>`SELECT n, b FROM bytes ORDER BY n`;
      assert.deepEqual(
        rows.map((row) => [row.n, [...row.b]]),
        views.map((view, n) => [n, bytesOf(view)]),
      );
    });

    it("property: a row keeps each text in its column, or the call names the first value refused", async () => {
      const sql = await client();
      const refusedHere = UNBINDABLE.filter((k) => k.refused[kind] !== undefined);
      // Values of every kind a caller may pass: those the database binds and those it refuses.
      const anyValue: fc.Arbitrary<{ value: unknown; refused: boolean }> = fc.oneof(
        fc.string({ maxLength: 6 }).map((value) => ({ value, refused: false })),
        fc.integer().map((value) => ({ value, refused: false })),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({
          value,
          refused: false,
        })),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({
          value,
          refused: false,
        })),
        fc.boolean().map((value) => ({ value, refused: false })),
        fc.constantFrom(null, undefined).map((value) => ({ value, refused: false })),
        fc.date({ noInvalidDate: true }).map((value) => ({ value, refused: false })),
        fc.uint8Array({ maxLength: 4 }).map((value) => ({ value, refused: false })),
        fc.constantFrom(...UNBINDABLE).map((k) => ({
          value: k.value(),
          refused: refusedHere.includes(k),
        })),
      );
      await fc.assert(
        fc.asyncProperty(fc.tuple(anyValue, anyValue, anyValue), async (three) => {
          await sql.execute`DELETE FROM kept`;
          const [a, b, c] = three.map((t) => t.value);
          const first = three.findIndex((t) => t.refused);
          let outcome: unknown;
          try {
            await sql.execute`INSERT INTO kept (a, b, c) VALUES (${a}, ${b}, ${c})`;
          } catch (error) {
            outcome = error;
          }
          if (first >= 0) {
            assert.ok(outcome instanceof TypeError, `expected a TypeError, got ${String(outcome)}`);
            assert.match(outcome.message, new RegExp(`parameter ${first + 1}[ ,]`));
            assert.deepEqual(await sql.query`SELECT a FROM kept`, []);
            return;
          }
          // A value the database takes, but not in a text column (mysql2's Infinity): its error.
          if (outcome instanceof DataError) return;
          assert.equal(outcome, undefined);
          const row = await sql.one<Record<string, unknown>>`SELECT a, b, c FROM kept`;
          three.forEach(({ value }, i) => {
            if (typeof value === "string") assert.equal(row["abc"[i]], value);
          });
        }),
        propertyOptions(kind === "sqlite" ? 200 : 60),
      );
    });
  });
}

describe("SqlClient on a pool's connections", () => {
  // A pool that records what the client does with its connections.
  function fakePool(fail?: DataError) {
    const log: string[] = [];
    const pool: DataPool = {
      name: "fake",
      kind: "postgres",
      native: { fake: true },
      maxSize: 1,
      idleCount: () => 0,
      acquire: () => {
        log.push("acquire");
        return Promise.resolve({
          run: (text) => {
            log.push(`run ${text}`);
            return fail
              ? Promise.reject(fail)
              : Promise.resolve({ rows: [{ a: 1 }], rowsAffected: 0 });
          },
          control: (text) => {
            log.push(`control ${text}`);
            return Promise.resolve();
          },
          cursor: (text) => {
            log.push(`cursor ${text}`);
            return Promise.reject(fail ?? new Error("no stream in this case"));
          },
          release: (broken) => {
            log.push(`release${broken ? " broken" : ""}`);
          },
        });
      },
      close: () => Promise.resolve(),
    };
    return { pool, log };
  }

  it("takes a connection for the statement and gives it back", async () => {
    const { pool, log } = fakePool();
    const sql = new SqlClient(pool);
    assert.deepEqual(await sql.query`SELECT ${1}`, [{ a: 1 }]);
    assert.deepEqual(log, ["acquire", "run SELECT $1", "release"]);
    assert.deepEqual(sql.pool, { fake: true });
  });

  it("gives a connection that failed under the statement back as broken", async () => {
    const lost = new DataError({ datasource: "fake", reason: "connection", message: "gone" });
    const { pool, log } = fakePool(lost);
    await assert.rejects(new SqlClient(pool).query`SELECT 1`, lost);
    assert.deepEqual(log, ["acquire", "run SELECT 1", "release broken"]);
  });

  it("refuses a string where a tag is written, saying how to call it, before any connection", async () => {
    const { pool, log } = fakePool();
    const sql = new SqlClient(pool);
    const id = 7;
    // As a caller without types (JavaScript, or a cast) would call them.
    const loose = sql as unknown as Record<string, (first: unknown) => Promise<unknown>>;
    const calls: [string, unknown][] = [
      ["query", "SELECT * FROM t"],
      ["one", `SELECT * FROM t WHERE id = ${id}`],
      ["maybeOne", "SELECT 1"],
      ["execute", "DELETE FROM t"],
      // A plain array is not a template either: its strings were never written as one.
      ["query", ["SELECT 1"]],
    ];
    for (const [method, first] of calls) {
      await assert.rejects(loose[method](first), (error: unknown) => {
        assert.ok(error instanceof TypeError, `${method}: ${String(error)}`);
        assert.match(
          error.message,
          new RegExp(
            `^datasource "fake": ${method}\\(\\) is a tag: write sql\\.${method}\`SELECT \\.\\.\\. \\$\\{value\\}\`, ` +
              "not sql\\." + method + '\\("\\.\\.\\."\\)',
          ),
        );
        assert.match(error.message, /unsafe\(text, params\)/);
        return true;
      });
    }
    for (const call of [SqlClient.fragment, fragment]) {
      assert.throws(() => (call as unknown as (text: string) => unknown)("AND id = 1"), {
        name: "TypeError",
        message:
          /^fragment\(\) is a tag: write fragment`AND id = \$\{value\}`, not fragment\("\.\.\."\)/,
      });
    }
    assert.deepEqual(log, []);
  });

  it("gives a connection back whole when the database refused the statement", async () => {
    const refused = new DataError({ datasource: "fake", reason: "statement", message: "no" });
    const { pool, log } = fakePool(refused);
    await assert.rejects(new SqlClient(pool).execute`DELETE`, refused);
    assert.deepEqual(log, ["acquire", "run DELETE", "release"]);
  });
});

// What docs/testing.md says comes back of another type on SQLite than on PostgreSQL, for one table
// made with PostgreSQL's type names on both, as a test on SQLite would make it.
describe("SqlClient: the values that differ between SQLite and PostgreSQL", () => {
  const open = testPools();
  const at = new Date("2024-01-02T03:04:05.678Z");
  const row = async (kind: Kind): Promise<Record<string, unknown>> => {
    const sql = new SqlClient((await open(kind)).pool);
    await sql.execute`
      CREATE TABLE typed (big BIGINT, i INTEGER, price NUMERIC(10, 2), flag BOOLEAN,
        at TIMESTAMPTZ, day DATE, doc JSONB, bytes BYTEA, s TEXT)`;
    await sql.execute`INSERT INTO typed VALUES (${42}, ${7}, ${"1.50"}, ${true}, ${at},
      ${"2024-01-02"}, ${JSON.stringify({ a: [1] })}, ${new Uint8Array([0, 255])}, ${"x"})`;
    const values = await sql.one<Record<string, unknown>>`SELECT * FROM typed`;
    const sums = await sql.one<Record<string, unknown>>`
      SELECT count(*) AS n, sum(i) AS total, CURRENT_TIMESTAMP AS now FROM typed`;
    return { ...values, ...sums, bytes: [...(values.bytes as Uint8Array)] };
  };

  for (const kind of KINDS.filter((k) => k !== "mysql")) {
    it(`on ${kind}`, async () => {
      const { now, ...got } = await row(kind);
      if (kind === "postgres") {
        assert.ok(now instanceof Date);
        assert.deepEqual(got, {
          big: "42",
          i: 7,
          price: "1.50",
          flag: true,
          at,
          day: new Date(2024, 0, 2),
          doc: { a: [1] },
          bytes: [0, 255],
          s: "x",
          n: "1",
          total: "7",
        });
      } else {
        assert.match(String(now), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        assert.deepEqual(got, {
          big: 42,
          i: 7,
          price: 1.5,
          flag: 1,
          at: "2024-01-02T03:04:05.678Z",
          day: "2024-01-02",
          doc: '{"a":[1]}',
          bytes: [0, 255],
          s: "x",
          n: 1,
          total: 7,
        });
      }
    });
  }
});
