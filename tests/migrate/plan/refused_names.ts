import assert from "node:assert/strict";
import { checkMigrationNames } from "../../../src/migrate/plan/migration_name.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";

/** Asserts that checking the names `paths` refuses `file`, for `reason`, naming it. */
export function refused(paths: string[], file: string, reason: RegExp): void {
  assert.throws(
    () => checkMigrationNames(paths),
    (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, file);
      assert.match(error.message, reason);
      return true;
    },
  );
}
