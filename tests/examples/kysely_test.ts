// The Kysely recipe of docs/data.md (examples/kysely/thaw_dialect.ts) on each database: typed
// queries through the datasource's client, inside its transactions, and Kysely's own transactions
// refused with what to use instead.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Generated, Kysely } from "kysely";
import { SqlClient } from "../../data.ts";
import { thawDialect } from "../../examples/kysely/thaw_dialect.ts";
import { KINDS, testPools } from "../sql/pools.ts";

interface Database {
  notes: { id: Generated<number>; body: string };
}

const ID: Record<string, string> = {
  sqlite: "INTEGER PRIMARY KEY",
  postgres: "SERIAL PRIMARY KEY",
  mysql: "INT AUTO_INCREMENT PRIMARY KEY",
};

for (const kind of KINDS) {
  describe(`Kysely over a datasource's SqlClient on ${kind}`, () => {
    const open = testPools();

    it("runs typed queries with bound values, and joins the transaction it is called in", async () => {
      const { pool, admin } = await open(kind, { maxSize: 1, acquireTimeoutMs: 5_000 });
      const sql = new SqlClient(pool);
      await sql.unsafe(`CREATE TABLE notes (id ${ID[kind]}, body VARCHAR(100) NOT NULL)`);
      const db = new Kysely<Database>({ dialect: thawDialect(sql) });
      const body = "it's a value; DROP TABLE notes; --";
      const inserted = await db.insertInto("notes").values({ body }).executeTakeFirstOrThrow();
      assert.equal(inserted.numInsertedOrUpdatedRows, 1n);
      const rows = await db.selectFrom("notes").select(["body"]).where("body", "=", body).execute();
      assert.deepEqual(rows, [{ body }]);
      await assert.rejects(
        sql.transaction(async () => {
          await db.insertInto("notes").values({ body: "rolled back" }).execute();
          assert.equal((await admin.query("SELECT body FROM notes")).length, 1, "seen outside");
          throw new Error("fails after Kysely's insert");
        }),
        /fails after Kysely's insert/,
      );
      assert.deepEqual((await admin.query("SELECT body FROM notes")).map((r) => r.body), [body]);
      // .stream() through sql.unsafeStream: its rows, chunk by chunk; a break frees the
      // connection (the pool has one).
      await db.insertInto("notes").values(
        Array.from({ length: 250 }, (_, i) => ({ body: `note ${i}` })),
      ).execute();
      const streamed: string[] = [];
      for await (
        const row of db.selectFrom("notes").select(["body"]).where("body", "like", "note %")
          .orderBy("id").stream(40)
      ) {
        streamed.push(row.body);
      }
      assert.equal(streamed.length, 250);
      assert.equal(streamed[249], "note 249");
      for await (const _ of db.selectFrom("notes").select(["body"]).stream(10)) break;
      assert.equal((await db.selectFrom("notes").select(["id"]).execute()).length, 251);
      await assert.rejects(
        db.transaction().execute(() => Promise.resolve()),
        /Kysely's transactions are Thaw's here: use @Transactional or sql.transaction\(\)/,
      );
    });
  });
}
