import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  addRunnerVersion,
  DatabaseError,
  fileRecords,
} from "../../../src/migrate/sql/sql_database.ts";
import { propertyOptions } from "../../property.ts";

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

describe("fileRecords: rows as any database or earlier version gives them", () => {
  it("property: never throws; keeps path and checksum, and only the run facts it can read", () => {
    const value = fc.oneof(
      fc.string(),
      fc.date({ noInvalidDate: false }),
      fc.integer(),
      fc.constant(null),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        value,
        value,
        fc.option(value, { nil: undefined }),
        (path, hash, at, by, version) => {
          const row: Record<string, unknown> = {
            migration_path: path,
            content_hash: hash,
            executed_at: at,
            executed_by: by,
          };
          if (version !== undefined) row.runner_version = version;
          const record = fileRecords([row]).get(path)!;
          assert.equal(record.hash, hash);
          if (record.executedAt !== undefined) {
            assert.equal(new Date(record.executedAt).toISOString(), record.executedAt);
          }
          assert.equal(record.executedBy, typeof by === "string" && by !== "" ? by : undefined);
          assert.equal(
            record.runnerVersion,
            typeof version === "string" && version !== "" ? version : undefined,
          );
        },
      ),
      propertyOptions(500),
    );
  });
});
