import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("permissions (Deno)", () => {
  it("an app configured in code needs no permission at all", async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["run", "--no-prompt", "tests/fixtures/no_permissions.ts"],
        { cwd: root, env: { ...process.env, NO_COLOR: "1" } },
        (
          error,
          stdout,
          stderr,
        ) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    assert.deepEqual(JSON.parse(out), { status: 200, body: { word: "hi" } });
  });
});
