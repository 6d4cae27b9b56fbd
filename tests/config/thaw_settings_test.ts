import { describe, it } from "node:test";
import { writeFile } from "node:fs/promises";
import { execFile } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
// The keys of the actuator and of the client address are declared with their modules: these
// tests read them too.
import "../../src/config/management_keys.ts";
import "../../src/config/forward_headers_keys.ts";
import "../../src/config/logging_keys.ts";
import fc from "fast-check";
import { bootstrap, ConfigError } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";
import {
  keyDeclarations,
  RUNNER_SECTIONS,
  THAW_KEYS,
  THAW_SECTIONS,
} from "../../src/config/thaw_keys.ts";
import {
  editDistance,
  nearestKey,
  nearMissSections,
  readSettings,
  type SettingKey,
} from "../../src/config/thaw_settings.ts";
import { memoryLogger } from "../helpers.ts";
import { propertyOptions } from "../property.ts";
import { scriptCommand } from "../runtime.ts";
import { withYaml } from "./yaml_file.ts";

const NO_ENV = () => undefined;
const settingsOf = (values: ConfigValues) => readSettings(resolveConfig(values, NO_ENV));

/** `server.port` as a nested object holding `value`. */
function nested(key: string, value: unknown): ConfigValues {
  return key.split(".").reduceRight<unknown>(
    (inner, part) => ({ [part]: inner }),
    value,
  ) as ConfigValues;
}

/** Misspellings of a key's last segment one edit away: a letter dropped, doubled, swapped. */
function misspellings(key: string): string[] {
  const dot = key.lastIndexOf(".");
  const [parent, name] = [key.slice(0, dot), key.slice(dot + 1)];
  const out = new Set<string>();
  for (let i = 0; i < name.length; i++) {
    out.add(name.slice(0, i) + name.slice(i + 1));
    out.add(name.slice(0, i) + name[i] + name.slice(i));
    if (i + 1 < name.length) {
      out.add(name.slice(0, i) + name[i + 1] + name[i] + name.slice(i + 2));
    }
  }
  out.delete(name);
  return [...out].filter((n) => n !== "").map((n) => `${parent}.${n}`);
}

// A value each declared type takes, for the keys that must hold one.
const SAMPLE: Record<string, unknown> = {
  integer: 1,
  boolean: true,
  string: "x",
  list: ["x"],
  feature: true,
};

/** A value of the type a declared key holds. */
function sampleFor(key: string): unknown {
  // A key holding others is told by them, one of them set: a switch alone (`enabled`) could be
  // any feature's.
  const child = keyDeclarations().find(([k]) => k.startsWith(`${key}.`) && !k.endsWith(".enabled"))
    ?.[0];
  if (child !== undefined) return nested(child.slice(key.length + 1), sampleFor(child));
  const declaration = keyDeclarations().find(([k]) => k === key)![1];
  if (declaration.type === "choice") return declaration.choices![declaration.choices!.length - 1];
  // An integer with a least value above the sample's takes that least value.
  if (declaration.type === "integer") {
    return Math.max(SAMPLE.integer as number, declaration.min ?? 0);
  }
  return SAMPLE[declaration.type];
}

describe("readSettings: Thaw's keys, read once", () => {
  it("gives each declared key its default when the configuration leaves it out", () => {
    const settings = settingsOf({});
    for (const [key, declaration] of keyDeclarations()) {
      assert.deepEqual(settings.get(key as SettingKey), declaration.default, key);
    }
  });

  it("reads every declared key from the configuration, text from ${VAR} included", () => {
    for (const [key] of keyDeclarations()) {
      const value = sampleFor(key);
      const settings = settingsOf(nested(key, value));
      assert.deepEqual(settings.get(key as SettingKey), value, key);
    }
    assert.equal(settingsOf(nested("server.port", "8081")).get("server.port"), 8081);
    assert.equal(
      settingsOf(nested("server.allow-encoded-slash", "true")).get(
        "server.allow-encoded-slash",
      ),
      true,
    );
    assert.deepEqual(settingsOf(nested("app.component-scan", "./src")).get("app.component-scan"), [
      "./src",
    ]);
  });

  it("refuses a value of the wrong type for every declared key, naming the key", () => {
    for (const [key, declaration] of keyDeclarations()) {
      if (declaration.type === "feature") continue;
      const wrong = declaration.type === "list" ? [1] : { a: 1 };
      assert.throws(
        () => settingsOf(nested(key, wrong)),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(`config: ${key} must `),
        key,
      );
    }
    assert.throws(() => settingsOf(nested("server.port", 70000)), {
      message: "config: server.port must be an integer from 0 to 65535, got 70000",
    });
    assert.throws(() => settingsOf(nested("management.endpoint.health.show-details", "yes")), {
      message: 'config: management.endpoint.health.show-details must be always or never, got "yes"',
    });
  });

  // Generated from the declarations: a key added to THAW_KEYS is in this table at once.
  it("refuses each misspelling of every declared key holding its kind of value, naming the key", () => {
    let checked = 0;
    for (const [key] of keyDeclarations()) {
      for (const typo of misspellings(key)) {
        if (key in THAW_KEYS && typo in THAW_KEYS) continue;
        const siblings = keyDeclarations().map(([k]) => k).filter((k) =>
          k.startsWith(typo.slice(0, typo.lastIndexOf(".") + 1))
        );
        // A typo nearer another key (or a parent of keys) is that key's to claim.
        const nearest = nearestKey(typo, siblings);
        if (nearest !== key) continue;
        assert.throws(
          () => settingsOf(nested(typo, sampleFor(key))),
          { message: `config: ${typo}: unknown key; did you mean ${key}?` },
          typo,
        );
        checked++;
      }
    }
    assert.ok(checked > 100, `${checked} misspellings checked`);
  });

  it("refuses a key under Thaw's sections that is near no key, listing the keys there", () => {
    assert.throws(() => settingsOf({ server: { tls: { cert: "x" } } }), {
      message: "config: server.tls: unknown key; the keys under server are port, hostname, " +
        "max-body-size, allow-encoded-slash, shutdown-timeout, shutdown-delay, request-timeout, " +
        "header-timeout, forward-headers-strategy, sse, websocket, multipart",
    });
    assert.throws(() => settingsOf({ logging: { levle: { root: "info" } } }), {
      message: "config: logging.levle: unknown key; did you mean logging.level?",
    });
    assert.throws(() => settingsOf({ management: { helth: { enabled: true } } }), {
      message: "config: management.helth: unknown key; did you mean management.health?",
    });
    assert.throws(() => settingsOf({ server: 8080 }), {
      message: "config: server must be a mapping of server.port, server.hostname, " +
        "server.max-body-size, server.allow-encoded-slash, server.shutdown-timeout, " +
        "server.shutdown-delay, server.request-timeout, server.header-timeout, " +
        "server.forward-headers-strategy, server.sse, server.websocket, server.multipart",
    });
  });

  it("leaves the app's own keys alone: under app, and every other section", () => {
    const settings = settingsOf({
      app: { name: "shop", mail: { port: 25 } },
      mail: { prot: 1 },
      info: { team: "a" },
    });
    assert.equal(settings.get("server.port"), 8080);
  });

  it("reports every unknown key at once, each with its file and line", async () => {
    await withYaml(
      "server:\n  prot: 8080\n  max-body-sise: 10\nmanagement:\n  endpoint:\n    health:\n" +
        "      show-detail: always\n",
      async (file) => {
        const config = await loadConfig(file, { env: {} });
        assert.throws(() => readSettings(config), {
          message: "3 unknown keys:\n" +
            `  ${file}:2: server.prot: unknown key; did you mean server.port?\n` +
            `  ${file}:3: server.max-body-sise: unknown key; did you mean server.max-body-size?\n` +
            `  ${file}:7: management.endpoint.health.show-detail: unknown key; did you mean ` +
            "management.endpoint.health.show-details?",
        });
      },
    );
  });

  it("stops bootstrap on a misspelt key, and warns of a misspelt section, naming its line", async () => {
    await withYaml("managment:\n  health:\n    enabled: true\n", async (file) => {
      const config = await loadConfig(file, { env: {} });
      const warnings: string[] = [];
      const logger = { ...memoryLogger(), warn: (m: string) => void warnings.push(m) };
      await bootstrap({ config, logger });
      assert.deepEqual(warnings, [
        `${file}:1: managment: not a section Thaw reads, so its keys are ignored; did you ` +
        "mean management?",
      ]);
    });
    await withYaml("server:\n  prot: 8080\n", async (file) => {
      const config = await loadConfig(file, { env: {} });
      await assert.rejects(bootstrap({ config, logger: memoryLogger() }), {
        name: "ConfigError",
        message: `${file}:2: server.prot: unknown key; did you mean server.port?`,
      });
    });
    // A logger without warn gets the warning at error.
    const logger = memoryLogger();
    await bootstrap({ config: { sever: { port: 1 } }, logger, env: {} });
    assert.deepEqual(logger.lines, [[
      "config: sever: not a section Thaw reads, so its keys are ignored; did you mean server?",
    ]]);
  });

  it("warns of every top-level key one or two edits from a section, and of no other", () => {
    const sections = [...THAW_SECTIONS, ...RUNNER_SECTIONS];
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 12 }), (key) => {
        const config = resolveConfig({ [key]: 1 }, NO_ENV);
        const warned = nearMissSections(config).length > 0;
        const near = !sections.includes(key) && key !== "app" &&
          sections.some((s) => editDistance(key.toLowerCase(), s) <= (s.length <= 5 ? 1 : 2));
        assert.equal(warned, near, key);
      }),
      propertyOptions(),
    );
    for (const section of sections) {
      for (const typo of misspellings(`x.${section}`).map((k) => k.slice(2))) {
        if (sections.includes(typo)) continue;
        assert.equal(nearMissSections(resolveConfig({ [typo]: 1 }, NO_ENV)).length, 1, typo);
      }
    }
  });
});

describe("editDistance", () => {
  it("counts insertions, deletions, substitutions and swaps of neighbours", () => {
    assert.equal(editDistance("prot", "port"), 1);
    assert.equal(editDistance("", "abc"), 3);
    assert.equal(editDistance("managment", "management"), 1);
    assert.equal(editDistance("kitten", "sitting"), 3);
  });

  it("is symmetric, zero only for equal texts, and at most the longer length", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 }), (a, b) => {
        const d = editDistance(a, b);
        assert.equal(d, editDistance(b, a));
        assert.equal(d === 0, a === b);
        assert.ok(d <= Math.max(a.length, b.length));
      }),
      propertyOptions(),
    );
  });
});

describe("readSettings: the app section, shared with the app's own keys", () => {
  it("refuses a near miss of Thaw's key that holds what that key holds", () => {
    assert.throws(() => settingsOf({ app: { "component-scn": ["./src"] } }), {
      message: "config: app.component-scn: unknown key; did you mean app.component-scan?",
    });
    assert.throws(() => settingsOf({ app: { opnapi: { title: "Shop" } } }), {
      message: "config: app.opnapi: unknown key; did you mean app.openapi?",
    });
    assert.throws(() => settingsOf({ app: { openapi: { titel: "Shop" } } }), {
      message: "config: app.openapi.titel: unknown key; did you mean app.openapi.title?",
    });
  });

  it("takes a near miss that holds something else as the app's own key", () => {
    const settings = settingsOf({
      app: { openai: { "api-key": "k", model: "m" }, "component-span": 3, name: "shop" },
    });
    assert.equal(settings.get("app.openapi"), undefined);
  });
});

describe("readSettings: keys written with a dot", () => {
  it("refuses a dotted key under Thaw's sections and at the top, which no reader would take", async () => {
    await withYaml("management:\n  health.enabled: true\nserver.port: 9090\n", async (file) => {
      const config = await loadConfig(file, { env: {} });
      assert.throws(() => readSettings(config), {
        message: "2 unknown keys:\n" +
          `  ${file}:2: management.health.enabled: a key holding "." is not read as nested ` +
          "keys; write health: enabled: on lines of their own, one under the other\n" +
          `  ${file}:3: server.port: a key holding "." is not read as nested keys; write ` +
          "server: port: on lines of their own, one under the other",
      });
    });
  });

  it("takes a feature flag of the app's own that is near app.openapi", () => {
    for (const openai of [false, true, { enabled: true }]) {
      assert.equal(settingsOf({ app: { openai } }).get("app.openapi"), undefined);
    }
  });

  it("reports no profile for a configuration object, warning of thaw.profiles.active", () => {
    const warnings: string[] = [];
    const settings = readSettings(
      resolveConfig({ thaw: { profiles: { active: "prod" } } }, NO_ENV),
      (w) => warnings.push(w),
    );
    assert.deepEqual(settings.profiles, []);
    assert.deepEqual(warnings, [
      "config: thaw.profiles.active names profiles, but this configuration was not read by " +
      "loadConfig, so no profile's file was read: none is active",
    ]);
  });
});

describe("readSettings: round two", () => {
  it("refuses a dotted key under app that names Thaw's key, from a profile too", async () => {
    await withYaml("app:\n  openapi:\n    title: T\n", async (file) => {
      await writeFile(file.replace(/\.yml$/, "-prod.yml"), "app:\n  openapi.enabled: false\n");
      const config = await loadConfig(file, { env: {}, profiles: "prod" });
      assert.throws(() => readSettings(config), {
        message: `${file.replace(/\.yml$/, "-prod.yml")}:2: app.openapi.enabled: a key holding ` +
          '"." is not read as nested keys; write openapi: enabled: on lines of their own, one ' +
          "under the other",
      });
    });
    assert.throws(() => settingsOf({ app: { "component-scan.0": "./src" } }), /holding "\."/);
    assert.throws(() => settingsOf({ "Server.port": 1 }), /config: Server\.port: a key holding/);
    // The app's own dotted keys are the app's.
    assert.equal(settingsOf({ app: { "mail.host": "x" } }).get("app.openapi"), undefined);
  });

  it("writes every byte of a key that could break a line as \\uXXXX", () => {
    // deno-lint-ignore no-control-regex
    const breaking = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udfff]/;
    // One unknown key, its message alone.
    for (const c of ["\n", "\r", "\u001b", "\u0085", "\u2028", "\ud800", "\udfff"]) {
      let message = "";
      try {
        settingsOf({ server: { [`p${c}`]: 1 } });
      } catch (e) {
        message = (e as Error).message;
      }
      assert.ok(message.startsWith("config: server.p"), `${JSON.stringify(c)}: ${message}`);
      assert.doesNotMatch(message, breaking, JSON.stringify(c));
    }
    // Every UTF-16 code unit, 256 unknown keys a message (one a line): each call reads the whole
    // configuration, and one key a call, the 65,536 took over a minute on Deno.
    const batch = 256;
    for (let from = 0; from < 0x10000; from += batch) {
      const server: Record<string, number> = {};
      for (let code = from; code < from + batch; code++) {
        server[`p${String.fromCharCode(code)}`] = 1;
      }
      let message = "";
      try {
        settingsOf({ server });
      } catch (e) {
        message = (e as Error).message;
      }
      const [head, ...lines] = message.split("\n");
      const range = `U+${from.toString(16)} to U+${(from + batch - 1).toString(16)}`;
      assert.equal(head, `${batch} unknown keys:`, range);
      // A key that broke its line would make a line more, or one that is no key's.
      assert.equal(lines.length, batch, `${range}: ${message}`);
      for (const line of lines) {
        assert.ok(line.startsWith("  config: server.p"), `${range}: ${line}`);
        assert.doesNotMatch(line, breaking, `${range}: ${JSON.stringify(line)}`);
      }
    }
    const config = resolveConfig({ "serve\n": 1, "\u001bserver": 2 }, NO_ENV);
    for (const warning of nearMissSections(config)) {
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(warning, /[\n\u001b]/);
    }
  });
});

describe("a feature's keys declared after the configuration was read", () => {
  // In a process of its own: the keys this file imports are declared before anything is read.
  const yml = new URL("../fixtures/env_overrides.yml", import.meta.url);
  const run = (env: Record<string, string>, ...args: string[]) => {
    const [command, argv] = scriptCommand("tests/fixtures/late_keys.ts", args);
    return new Promise<string>((resolve, reject) =>
      execFile(
        command,
        argv,
        { env: { ...process.env, ...env } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim()),
      )
    );
  };

  it("refuses an environment variable that set one of them, rather than drop it", async () => {
    assert.equal(
      await run({ MANAGEMENT_SERVER_PORT: "9090" }),
      "ConfigError: environment variable MANAGEMENT_SERVER_PORT sets management.server.port, " +
        `declared after ${
          fileURLToPath(new URL("../fixtures/env_overrides.yml", import.meta.url))
        } ` +
        "was read: import its feature's entry point before loading the configuration",
    );
  });

  it("refuses one that set listen's key, where listen was imported after bootstrap", async () => {
    assert.equal(
      await run({ SERVER_FORWARD_HEADERS_STRATEGY: "framework" }, "listen"),
      "ConfigError: environment variable SERVER_FORWARD_HEADERS_STRATEGY sets " +
        `server.forward-headers-strategy, declared after ${fileURLToPath(yml)} was read: ` +
        "import its feature's entry point before loading the configuration",
    );
    // A key of a feature the app does not have (the actuator's) is no concern of listen's.
    assert.equal(await run({ MANAGEMENT_SERVER_PORT: "9090" }, "listen"), "listening");
  });

  it("takes the variable when the entry point came first, and nothing is lost without it", async () => {
    assert.equal(
      await run({ MANAGEMENT_SERVER_PORT: "9090" }, "early"),
      'bootstrapped: management.server.port {"server":{"port":9090}}',
    );
    assert.equal(await run({}), "bootstrapped: management.server.port undefined");
  });
});
