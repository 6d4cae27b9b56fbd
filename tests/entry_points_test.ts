// Every entry point of deno.json imported alone, in a fresh process of the runtime running the
// tests, and used for what it is for (tests/fixtures/entry_alone.ts). The packed npm package's
// entry points are tried the same way under plain Node in tests/npm/package_test.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { scriptCommand } from "./runtime.ts";

const root = new URL("../", import.meta.url);
const { exports } = JSON.parse(await readFile(new URL("deno.json", root), "utf8")) as {
  exports: Record<string, string>;
};

describe("entry points, each imported alone", () => {
  it("deno.json names the default entry and the twelve beside it", () => {
    assert.deepEqual(Object.keys(exports).sort(), [
      ".",
      "./actuator",
      "./cache-redis",
      "./cli",
      "./config",
      "./data",
      "./lock-sql",
      "./logging",
      "./migrate",
      "./openapi",
      "./scan",
      "./server",
      "./types",
    ]);
  });

  for (const [name, file] of Object.entries(exports)) {
    it(`${name} (${file}) works in a process that loads nothing else of Thaw first`, async () => {
      const [command, args] = scriptCommand(
        fileURLToPath(new URL("tests/fixtures/entry_alone.ts", root)),
        [name, new URL(file, root).href, new URL(exports["."], root).href],
      );
      const { stdout } = await promisify(execFile)(command, args, { encoding: "utf8" })
        .catch((error) => {
          throw new Error(`${name}: exit ${error.code}\n${error.stdout}${error.stderr}`);
        });
      assert.equal(stdout.trim().split("\n").at(-1), `ok ${name}`);
    });
  }
});
