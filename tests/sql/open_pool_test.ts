import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openPool } from "../../src/sql/open_pool.ts";
import type { Datasource } from "../../src/sql/datasource.ts";
import { DataError } from "../../src/sql/data_error.ts";

const base = {
  migrationsEnabled: false,
  strictOrder: false,
  validateOnMigrate: false,
  table: "framework_migrations",
};
const DATASOURCES: Datasource[] = [
  { ...base, name: "notes", kind: "sqlite", location: ":memory:" },
  { ...base, name: "main", kind: "postgres", location: "postgres://127.0.0.1:1/none" },
  { ...base, name: "legacy", kind: "mysql", location: "mysql://127.0.0.1:1/none" },
];

describe("open_pool", () => {
  for (const datasource of DATASOURCES) {
    it(`opens a ${datasource.kind} pool without connecting`, async () => {
      const pool = await openPool(datasource, { maxSize: 2 });
      assert.equal(pool.name, datasource.name);
      assert.equal(pool.kind, datasource.kind);
      assert.ok(pool.native !== undefined);
      await pool.close();
    });

    if (datasource.kind !== "sqlite") {
      it(`refuses pool.sqlite settings on a ${datasource.kind} datasource, naming it and the key`, async () => {
        await assert.rejects(
          openPool(datasource, { sqlite: { synchronous: "NORMAL" } }),
          {
            name: "RangeError",
            message: new RegExp(
              `^datasource "${datasource.name}": pool\\.sqlite\\.synchronous is a SQLite setting, and ` +
                `this datasource is ${
                  datasource.kind === "postgres" ? "PostgreSQL" : "MariaDB or MySQL"
                }`,
            ),
          },
        );
      });
    }

    if (datasource.kind !== "sqlite") {
      it(`a ${datasource.kind} server that refuses connections fails the call naming the datasource, not the password`, async () => {
        // Port 1 on the loopback: nothing listens, the connection is refused at once.
        const pool = await openPool({ ...datasource, username: "u", password: "pw-SECRET-1" }, {
          connectTimeoutMs: 5_000,
          acquireTimeoutMs: 5_000,
        });
        try {
          await assert.rejects(pool.acquire(), (error: unknown) => {
            assert.ok(error instanceof DataError, String(error));
            assert.equal(error.reason, "connect");
            assert.match(
              error.message,
              new RegExp(`^datasource "${datasource.name}": cannot connect`),
            );
            assert.ok(!error.message.includes("pw-SECRET-1"), error.message);
            return true;
          });
        } finally {
          await pool.close();
        }
      });
    }

    it(`refuses a ${datasource.kind} setting that is not a positive number`, async () => {
      await assert.rejects(
        openPool(datasource, { acquireTimeoutMs: -1 }),
        new RegExp(`datasource "${datasource.name}": pool\\.acquire-timeout must be`),
      );
    });
  }
});
