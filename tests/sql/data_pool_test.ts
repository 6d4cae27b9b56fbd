import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KINDS, testPools } from "./pools.ts";

// What every pool's connections promise, whatever the database.
describe("data_pool", () => {
  const open = testPools();
  for (const kind of KINDS) {
    // Given back, the connection may be another caller's already: a statement sent on it then
    // would run in that caller's session, inside its transaction.
    it(`a ${kind} connection given back takes no statement, whatever the call`, async () => {
      const { pool } = await open(kind, { maxSize: 1 });
      const connection = await pool.acquire();
      await connection.run("SELECT 1 AS one", []);
      connection.release();
      const next = await pool.acquire();
      await next.control("BEGIN");
      const calls: [string, () => Promise<unknown>][] = [
        ["run", () => connection.run("SELECT 2 AS two", [])],
        ["control", () => connection.control("COMMIT")],
        ["cursor", () => connection.cursor("SELECT 3 AS three", [], true)],
      ];
      for (const [call, made] of calls) {
        await assert.rejects(made(), /a released .* connection was used/, call);
      }
      // The transaction of the one who has it now is whole: its COMMIT is its own.
      await next.control("COMMIT");
      next.release();
    });
  }
});
