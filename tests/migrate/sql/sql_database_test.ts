import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addRunnerVersion, DatabaseError } from "../../../src/migrate/sql/sql_database.ts";

describe("addRunnerVersion: upgrading a records table an earlier version made", () => {
  it("runs the statement it is given", async () => {
    const sent: string[] = [];
    await addRunnerVersion("t", "ALTER TABLE t ADD x", (sql) => Promise.resolve(sent.push(sql)));
    assert.deepEqual(sent, ["ALTER TABLE t ADD x"]);
  });

  it("says, when refused, what to run once and as whom, keeping the cause: a database error", async () => {
    const refusal = new Error("must be owner of table framework_migrations");
    const statement =
      'ALTER TABLE "framework_migrations" ADD COLUMN IF NOT EXISTS runner_version VARCHAR(64)';
    await assert.rejects(
      addRunnerVersion("framework_migrations", statement, () => Promise.reject(refusal)),
      (error: unknown) => {
        // A DatabaseError, as the target's failure() reads it: the run's report says it (exit 1),
        // where another error would escape the report.
        assert.ok(error instanceof DatabaseError, String(error));
        assert.match(
          error.message,
          /^the records table "framework_migrations" needs the runner_version column .*must be owner of table framework_migrations.*its owner on PostgreSQL/,
        );
        assert.ok(error.message.endsWith(`run: ${statement}`), error.message);
        assert.equal(error.cause, refusal);
        return true;
      },
    );
  });
});
