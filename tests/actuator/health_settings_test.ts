import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/application_config.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import {
  type HealthOptions,
  type HealthSettings,
  healthSettings,
} from "../../src/actuator/health_settings.ts";

/** The settings of `values` and `option`; a rejected promise for what they refuse. */
function settings(
  values: ConfigValues,
  option: HealthOptions | undefined,
): Promise<HealthSettings> {
  return Promise.resolve().then(() => healthSettings(readSettings(resolveConfig(values)), option));
}

function management(showDetails?: unknown, timeout?: unknown): ConfigValues {
  return {
    management: {
      health: { timeout },
      endpoint: { health: { "show-details": showDetails } },
    },
  };
}

describe("the health settings", () => {
  it("default to no details and 5000 ms", async () => {
    assert.deepEqual(await settings({}, undefined), { showDetails: "never", timeout: 5000 });
    assert.deepEqual(await settings({}, {}), { showDetails: "never", timeout: 5000 });
  });

  it("read the management keys, a placeholder's text included", async () => {
    assert.deepEqual(await settings(management("always", 250), undefined), {
      showDetails: "always",
      timeout: 250,
    });
    const fromEnv = healthSettings(
      readSettings(resolveConfig(
        management("${DETAILS}", "${TIMEOUT}"),
        (name) => (({ DETAILS: "always", TIMEOUT: "40" }) as Record<string, string>)[name],
      )),
      undefined,
    );
    assert.deepEqual(fromEnv, { showDetails: "always", timeout: 40 });
  });

  it("take the option's keys over the file's, each on its own", async () => {
    assert.deepEqual(await settings(management("always", 250), { showDetails: "never" }), {
      showDetails: "never",
      timeout: 250,
    });
    assert.deepEqual(await settings(management("always", 250), { timeout: 7 }), {
      showDetails: "always",
      timeout: 7,
    });
    // Every key is read once, at bootstrap, whether or not an option replaces it: a wrong value
    // in the file is refused all the same, so that it cannot surprise the day the option goes.
    await assert.rejects(
      settings(management("sometimes", "soon"), { showDetails: "always", timeout: 9 }),
      /management\.health\.timeout must be an integer from 1 to 2147483647, got "soon"/,
    );
  });

  it("refuse values of the wrong kind, naming the key or option", async () => {
    const refused: [ConfigValues, HealthOptions | undefined, RegExp][] = [
      [
        management("sometimes"),
        undefined,
        /management\.endpoint\.health\.show-details must be always or never, got "sometimes"/,
      ],
      [
        management(undefined, 0),
        undefined,
        /management\.health\.timeout must be an integer from 1 to 2147483647, got 0/,
      ],
      [management(undefined, "5s"), undefined, /management\.health\.timeout must be an integer/],
      [
        {},
        { timeout: 0 },
        /actuator\(\) option health\.timeout must be a whole number of milliseconds from 1 to 2147483647, got 0/,
      ],
      [{}, { timeout: 1.5 }, /health\.timeout .* got 1\.5/],
      [
        {},
        { showDetails: "ALWAYS" as "always" },
        /actuator\(\) option health\.showDetails must be always or never, got "ALWAYS"/,
      ],
      [
        {},
        { showdetails: "always" } as HealthOptions,
        /actuator\(\) option health: unknown option "showdetails"; the options are showDetails, timeout/,
      ],
      [
        {},
        null as unknown as HealthOptions,
        /actuator\(\) option health: the options must be an object, got null/,
      ],
      [{}, "false" as unknown as HealthOptions, /got "false"/],
      [{}, [] as unknown as HealthOptions, /got an array/],
    ];
    for (const [values, option, message] of refused) {
      await assert.rejects(
        settings(values, option),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        String(message),
      );
    }
  });
});
