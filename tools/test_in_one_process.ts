// Runs test files in one Node process, each as a suite named for its file: what `npm run test:unit`
// does on Node, where starting a process per file (tsx's loader included) cost more than the tests.
//
// Each file starts with the global Request and Response the process began with: @hono/node-server,
// under `listen(app)`, replaces them for the rest of a process, which a file of its own would
// never have seen from an earlier one. Run:
// `node --import tsx --test-reporter=spec tools/test_in_one_process.ts tests/a_test.ts ...`.

import { before, describe } from "node:test";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node --import tsx tools/test_in_one_process.ts <test file>...");
  process.exit(2);
}
const pristine = { Request: globalThis.Request, Response: globalThis.Response };
// The files' imports run side by side. tests/sqlite.ts awaits at its top level and many files
// import it: two imports racing its evaluation left one never settled on Node 20, and the run
// ended with "Promise resolution is still pending but the event loop has already resolved",
// cancelling every test after it. Evaluated here once, before any file asks for it; so is the
// file store's driver, which awaits its node: modules at its top level.
await import(pathToFileURL(resolve("tests/sqlite.ts")).href);
await import(pathToFileURL(resolve("src/storage/file_driver.ts")).href);
for (const file of files) {
  describe(file, async () => {
    // A suite is built when it is declared, its tests run later: the globals are put back then.
    before(() => {
      Object.defineProperties(globalThis, {
        Request: { value: pristine.Request },
        Response: { value: pristine.Response },
      });
    });
    await import(pathToFileURL(resolve(file)).href);
  });
}
