// integration test: SQLite (the runtime's own), PostgreSQL and MariaDB (tools/databases.sh start)
// Thaw's outbox migration, applied by the SQL migration runner as an app applies it: a migration
// in code in the datasource's folder whose default export is outboxMigration(). It creates the
// outbox table and its lock table on each database, once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KINDS, workspaces } from "../../migrate/sql/databases.ts";
import { outboxMigration } from "../../../src/kafka/outbox/outbox_migration.ts";

const MIGRATION = new URL("../../../src/kafka/outbox/outbox_migration.ts", import.meta.url).href;

describe("outboxMigration", () => {
  it("refuses a table name the statements could not hold as it is", () => {
    assert.throws(
      () => outboxMigration("orders; DROP TABLE users"),
      /^TypeError: outboxMigration: table "orders; DROP TABLE users" is not a plain identifier/,
    );
  });
});

for (const kind of KINDS) {
  describe(`outboxMigration on ${kind}`, () => {
    const workspace = workspaces(kind);

    it("creates the outbox table and its lock table, as a file of the datasource", async () => {
      const ws = await workspace();
      await ws.file(
        "V1__thaw_outbox.ts",
        `import { outboxMigration } from ${JSON.stringify(MIGRATION)};\n` +
          "export default outboxMigration();\n",
      );
      await ws.file(
        "V2__orders_outbox.ts",
        `import { outboxMigration } from ${JSON.stringify(MIGRATION)};\n` +
          'export default outboxMigration("orders_outbox");\n',
      );
      await ws.ok("migrate");
      for (
        const table of ["thaw_outbox", "thaw_outbox_lock", "orders_outbox", "orders_outbox_lock"]
      ) {
        assert.equal(await ws.count(table), 0, table);
      }
      const columns = await ws.query(
        "SELECT topic, record_key, record_value, headers, record_partition, created_at, sent_at " +
          "FROM thaw_outbox",
      );
      assert.deepEqual(columns, []);
      // Applied once: a second run has nothing to do.
      await ws.ok("migrate");
    });
  });
}
