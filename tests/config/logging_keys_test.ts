import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { LOGGING_KEYS } from "../../src/config/logging_keys.ts";
import { keyDeclarations, THAW_KEYS } from "../../src/config/thaw_keys.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { scriptCommand } from "../runtime.ts";

const run = promisify(execFile);

describe("the logging feature's keys", () => {
  it("are declared beside the core's once their module is imported, not in the core's table", () => {
    const declared: string[] = keyDeclarations().map(([key]) => key);
    for (const key of Object.keys(LOGGING_KEYS)) {
      assert.ok(declared.includes(key), `${key} is not declared`);
      assert.ok(!(key in THAW_KEYS), `${key} is in the core's table`);
    }
    // The core declares nothing under logging: set without the feature, any key there is the
    // feature the app left out, not a typo.
    assert.deepEqual(Object.keys(THAW_KEYS).filter((key) => key.startsWith("logging.")), []);
  });

  it("are checked and set by the environment like the core's", () => {
    const env = (name: string) =>
      ({
        LOGGING_STRUCTURED_FORMAT_CONSOLE: "logstash",
        LOGGING_LEVEL_ROOT: "DEBUG",
        LOGGING_ACCESS_ENABLED: "true",
      })[name];
    const settings = readSettings(resolveConfig({ logging: { level: { root: "INFO" } } }, env));
    assert.equal(settings.get("logging.structured.format.console"), "logstash");
    assert.deepEqual(settings.get("logging.level"), { root: "DEBUG" });
    assert.equal(settings.get("logging.access.enabled"), true);
    assert.equal(readSettings(resolveConfig({}, () => undefined)).get("logging.level"), undefined);
    assert.throws(
      () =>
        readSettings(
          resolveConfig(
            { logging: { structured: { format: { consol: "ecs" } } } },
            () => undefined,
          ),
        ),
      /logging\.structured\.format\.consol: unknown key; did you mean logging\.structured\.format\.console\?/,
    );
  });

  it("set in an app that does not import the feature stop bootstrap, saying what to import", async () => {
    // A process of its own: this one has imported them.
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/no_logging_keys.ts", import.meta.url)),
    );
    const { stdout } = await run(command, args);
    const refusal = "config: logging: these keys configure logging, which lives in its own entry " +
      'point: import { logging } from "@thaw/thaw/logging" and pass ' +
      "bootstrap({ logging: logging() })";
    assert.deepEqual(stdout.trim().split("\n"), [refusal, refusal, refusal, refusal, "booted"]);
    // The environment alone (shared with other services, maybe) asks for nothing.
    const env = { ...process.env, LOGGING_ACCESS_ENABLED: "true" };
    const alone = await run(command, args, { env });
    assert.equal(alone.stdout.trim().split("\n").at(-1), "booted");
  });
});
