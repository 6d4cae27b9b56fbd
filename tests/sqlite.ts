// Apart from tests/runtime.ts, which many tests import: a top-level await in a module that test
// files of several folders import left Node's one-process unit run (tools/test_in_one_process.ts)
// with a test file whose import never settled. Only the tests of SQLite wait on this one.

/**
 * The runtime's built-in SQLite, which the SQL runner uses; `undefined` where there is none
 * (Node before 22.13), where the runner must refuse SQLite with a clear error instead.
 */
export const SQLITE: typeof import("node:sqlite") | undefined = await import("node:sqlite")
  .catch(() => undefined);
