import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { MANAGEMENT_KEYS } from "../../src/config/management_keys.ts";
import { keyDeclarations, THAW_KEYS } from "../../src/config/thaw_keys.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { scriptCommand } from "../runtime.ts";

const run = promisify(execFile);

describe("the actuator's keys", () => {
  it("are declared beside the core's once their module is imported, not in the core's table", () => {
    const declared: string[] = keyDeclarations().map(([key]) => key);
    for (const key of Object.keys(MANAGEMENT_KEYS)) {
      assert.ok(declared.includes(key), `${key} is not declared`);
      assert.ok(!(key in THAW_KEYS), `${key} is in the core's table`);
    }
  });

  it("are checked, defaulted and set by the environment like the core's", () => {
    const env = (name: string) => ({ MANAGEMENT_SERVER_PORT: "9091" })[name];
    const settings = readSettings(resolveConfig({}, env));
    assert.equal(settings.get("management.server.port"), 9091);
    assert.deepEqual(settings.get("management.endpoints.web.exposure.include"), ["health"]);
    assert.throws(
      () => readSettings(resolveConfig({ management: { server: { prot: 1 } } }, () => undefined)),
      {
        message:
          "config: management.server.prot: unknown key; did you mean management.server.port?",
      },
    );
    assert.throws(
      () => readSettings(resolveConfig({}, (name) => ({ MANAGEMENT_SERVER_PORT: "x" })[name])),
      /management\.server\.port \(from environment variable MANAGEMENT_SERVER_PORT\)|MANAGEMENT_SERVER_PORT/,
    );
  });

  it("are not declared in an app that does not import the actuator, whose keys stop bootstrap", async () => {
    // A process of its own: this one has imported them.
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/no_actuator_keys.ts", import.meta.url)),
    );
    const { stdout } = await run(command, args);
    // Not a typo (nothing there is declared) but a feature the app left out.
    assert.equal(
      stdout.trim(),
      "config: management: these keys configure the actuator, which lives in its own entry " +
        'point: import { actuator } from "@thaw/thaw/actuator" and pass ' +
        "bootstrap({ actuator: actuator() })",
    );
  });
});
