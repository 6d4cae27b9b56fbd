import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs a fixture with Deno's `flags` and the extra environment `env`; its standard output. */
function runFixture(
  flags: readonly string[],
  fixture: string,
  env: Record<string, string> = {},
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["run", "--no-prompt", ...flags, fixture],
      { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

describe("permissions (Deno)", () => {
  it("environment overrides read only the variables the app may read, without failing", async () => {
    const env = { PORT: "1234", SERVER_PORT: "9999", MAIL_HOST: "b" };
    const fixture = "tests/fixtures/env_overrides.ts";
    // PORT is read for its placeholder; SERVER_PORT and MAIL_HOST are not granted, so unset.
    assert.deepEqual(
      JSON.parse(await runFixture(["--allow-read", "--allow-env=PORT"], fixture, env)),
      {
        server: { port: "1234" },
        mail: { host: "a" },
      },
    );
    assert.deepEqual(
      JSON.parse(await runFixture(["--allow-read", "--allow-env=PORT,MAIL_HOST"], fixture, env)),
      { server: { port: "1234" }, mail: { host: "b" } },
    );
    assert.deepEqual(JSON.parse(await runFixture(["--allow-read", "--allow-env"], fixture, env)), {
      server: { port: 9999 },
      mail: { host: "b" },
    });
  });

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
