// A body of the file store dropped unread is closed when it is collected, rather than by Node's and
// Bun's own finalizer of its file handle, which throws an uncaught error that ends the process.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { scriptCommand } from "../runtime.ts";

describe("a file store's body dropped unread", () => {
  it("is closed when collected, and the process goes on", async () => {
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/storage/dropped_body.ts", import.meta.url)),
    );
    const { stdout, stderr } = await promisify(execFile)(command, args, { encoding: "utf8" })
      .catch((error) => {
        throw new Error(`exit ${error.code}\n${error.stdout}${error.stderr}`);
      });
    // Collected, or the test proved nothing.
    assert.equal(stdout.trim(), "collected");
    assert.doesNotMatch(stderr, /garbage collection/);
  });
});
