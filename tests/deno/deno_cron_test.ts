// On the Deno CLI with `--unstable-cron` (as on Deno Deploy), a cron job in UTC runs through
// Deno.cron: registered under a name Deno takes, and run by Deno on the minute. Up to a minute.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("Deno.cron (Deno)", () => {
  it("runs a @Scheduled cron job in UTC through Deno.cron", async () => {
    const child = spawn(
      process.execPath,
      ["run", "--unstable-cron", "-A", "tests/fixtures/scheduling/deno_cron_app.ts"],
      { cwd: root, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk) => {
          out += chunk;
          if (/^ran 1$/m.test(out)) resolve();
        });
        child.stderr.on("data", (chunk) => err += chunk);
        child.on("exit", (code) => reject(new Error(`exited ${code}:\n${out}\n${err}`)));
      });
    } finally {
      child.kill("SIGKILL");
    }
    assert.match(out, /^registered: .*already exists/m);
    assert.equal(err, "");
  });
});
