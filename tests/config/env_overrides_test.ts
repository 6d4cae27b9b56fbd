import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bootstrap, PostMapping, RequestBody, RestController } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";
import { keyDeclarations } from "../../src/config/thaw_keys.ts";
import { applyEnvOverrides, envName, overrideValue } from "../../src/config/env_overrides.ts";
import { propertyOptions } from "../property.ts";
import { withYaml } from "./yaml_file.ts";

type Leaf = { path: (string | number)[]; value: unknown };

// The model: every scalar, and every list of scalars, is a leaf; Spring's name for it is its
// segments upper-cased, `-` as `_`, joined by `_`, for paths of two segments or more.
function modelLeaves(value: unknown, path: (string | number)[] = []): Leaf[] {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) return [{ path, value }];
    return value.flatMap((v, i) => modelLeaves(v, [...path, i]));
  }
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => modelLeaves(v, [...path, k]));
  }
  return [{ path, value }];
}

function modelName(path: (string | number)[]): string | undefined {
  if (path.length < 2) return undefined;
  return path.map((s) => String(s).toUpperCase().replaceAll("-", "_")).join("_");
}

function modelValue(text: string, was: unknown): unknown {
  if (Array.isArray(was)) {
    const items = text.trim() === "" ? [] : text.split(",").map((s) => s.trim());
    // A list of numbers (or of flags) takes its items as such, each one that reads as one.
    const like = was.length > 0 && was.every((v) => typeof v === typeof was[0] && v !== null)
      ? was[0]
      : undefined;
    return typeof like === "number" || typeof like === "boolean"
      ? items.map((item) => modelValue(item, like))
      : items;
  }
  if (typeof was === "number" && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(text)) return Number(text);
  if (typeof was === "boolean" && (text === "true" || text === "false")) return text === "true";
  return text;
}

function model(values: ConfigValues, env: Record<string, string>): ConfigValues {
  const out = structuredClone(values);
  for (const { path, value } of modelLeaves(values)) {
    const name = modelName(path);
    if (name === undefined || !Object.hasOwn(env, name)) continue;
    let node = out as Record<string | number, unknown>;
    for (const segment of path.slice(0, -1)) node = node[segment] as Record<string, unknown>;
    node[path[path.length - 1]] = modelValue(env[name], value);
  }
  return out;
}

const key = fc.constantFrom("a", "b", "mail", "max-size", "max_size", "port");
const scalar = fc.oneof(fc.integer(), fc.boolean(), fc.string({ maxLength: 6 }), fc.constant(null));
const tree: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    scalar,
    fc.array(scalar, { maxLength: 3 }),
    fc.array(fc.dictionary(key, tie("node"), { maxKeys: 3, noNullPrototype: true }), {
      minLength: 1,
      maxLength: 2,
    }),
    fc.dictionary(key, tie("node"), { maxKeys: 3, noNullPrototype: true }),
  ),
})).node;
const config = fc.dictionary(key, tree, { maxKeys: 3, noNullPrototype: true }) as fc.Arbitrary<
  ConfigValues
>;
const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer().map(String),
  fc.constantFrom(
    "true",
    "false",
    "a,b",
    " 7 ",
    "",
  ),
);

describe("applyEnvOverrides", () => {
  it("equals the model: each value and list reached by its relaxed name, typed as it was", () => {
    fc.assert(
      fc.property(config, fc.array(text, { maxLength: 6 }), fc.nat(), (values, texts, pick) => {
        // Variables for names the config has, and some for names it has not.
        const names = modelLeaves(values).map((l) => modelName(l.path))
          .filter((n): n is string => n !== undefined);
        const env: Record<string, string> = {};
        texts.forEach((t, i) => {
          const name = names.length > 0 && (pick + i) % 3 !== 0
            ? names[(pick + i) % names.length]
            : `UNRELATED_${i}`;
          env[name] = t;
        });
        const before = structuredClone(values);
        const result = applyEnvOverrides(values, (n) => env[n], []);
        assert.deepEqual(result.values, model(values, env));
        assert.deepEqual(values, before, "the given document is not changed");
        for (const { variable } of result.overrides) assert.ok(Object.hasOwn(env, variable));
      }),
      propertyOptions(200),
    );
  });

  it("names keys by Spring's rule, list items by their index", () => {
    assert.equal(envName(["server", "shutdown-timeout"]), "SERVER_SHUTDOWN_TIMEOUT");
    assert.equal(envName(["search", 0, "hosts"]), "SEARCH_0_HOSTS");
    assert.equal(envName(["mail", "port"]), "MAIL_PORT");
    // A top-level value would be set by PATH, HOME or USER without anyone meaning it.
    assert.equal(envName(["path"]), undefined);
  });

  it("reaches no key with a byte outside letters, digits, - and _, and takes any text as given", () => {
    for (let code = 0; code < 256; code++) {
      const c = String.fromCharCode(code);
      const reachable = /[A-Za-z0-9_-]/.test(c);
      assert.equal(envName(["mail", `p${c}`]) !== undefined, reachable, `byte ${code}`);
      assert.equal(overrideValue(`x${c}y`, "text"), `x${c}y`);
      const applied = applyEnvOverrides({ mail: { host: "h" } }, () => `a${c}b`, []);
      assert.deepEqual(applied.values, { mail: { host: `a${c}b` } });
    }
  });

  it("reaches Thaw's own keys with no file value, typed by their declaration", () => {
    const { values, overrides } = applyEnvOverrides(
      {},
      (name) => ({ SERVER_PORT: "9090", APP_COMPONENT_SCAN: "./a, ./b" })[name],
      [["server.port", "number"], ["app.component-scan", "list"], ["server.hostname", "text"]],
    );
    assert.deepEqual(values, { server: { port: 9090 }, app: { "component-scan": ["./a", "./b"] } });
    assert.deepEqual(overrides, [
      { key: "server.port", variable: "SERVER_PORT" },
      { key: "app.component-scan", variable: "APP_COMPONENT_SCAN" },
    ]);
  });

  it("refuses a declared key whose parent holds a value or a list: nothing to set it in", () => {
    const env = (name: string) => name === "SERVER_PORT" ? "1" : undefined;
    for (const server of [5, "x", [1, 2]]) {
      assert.throws(() => applyEnvOverrides({ server }, env, [["server.port", "number"]]), {
        name: "ConfigError",
        message: "environment variable SERVER_PORT sets server.port, but server holds a value, " +
          "not keys: give server as keys in the file, or unset SERVER_PORT",
      });
    }
  });
});

describe("environment overrides, end to end", () => {
  it("override a file's key, and name the variable in errors", async () => {
    await withYaml("mail:\n  port: 25\nserver:\n  port: 8080\n", async (file) => {
      const env = { MAIL_PORT: "2525", SERVER_SHUTDOWN_TIMEOUT: "5", SERVER_PORT: "x" };
      const config = await loadConfig(file, { env });
      assert.deepEqual(config.values, {
        mail: { port: 2525 },
        server: { port: "x", "shutdown-timeout": 5 },
      });
      await assert.rejects(bootstrap({ config }), {
        message: "environment variable SERVER_PORT: server.port must be an integer from 0 to " +
          '65535, got "x"',
      });
    });
  });

  it("reach a configuration object through bootstrap's env too", async () => {
    @RestController()
    class Echo {
      @PostMapping("/", RequestBody())
      echo(body: unknown): unknown {
        return body;
      }
    }
    const app = await bootstrap({
      controllers: [Echo],
      config: { mail: { host: "a" } },
      env: { MAIL_HOST: "b", SERVER_MAX_BODY_SIZE: "10" },
    });
    assert.deepEqual(app.config, { mail: { host: "b" }, server: { "max-body-size": 10 } });
    const post = (body: string) =>
      app.fetch(
        new Request("http://x/", {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        }),
      );
    assert.equal((await post('"12345678"')).status, 200);
    assert.equal((await post('"123456789"')).status, 413);
  });
});

describe("environment overrides of Thaw's keys", () => {
  it("reach every key the reference names a variable for, and no key holding others", () => {
    for (const [key, declaration] of keyDeclarations()) {
      const parent = keyDeclarations().some(([other]) => other.startsWith(`${key}.`));
      const variable = envName(key.split("."))!;
      const text = declaration.type === "integer"
        ? "7"
        : declaration.type === "boolean"
        ? "true"
        : declaration.type === "choice"
        ? declaration.choices![0]
        : "x";
      const config = resolveConfig({}, (name) => name === variable ? text : undefined);
      const origin = config.origins?.get(key);
      assert.equal(origin, parent ? undefined : `environment variable ${variable}`, key);
    }
  });
});

describe("environment overrides: what a platform sets that is no override", () => {
  it("skip Kubernetes and Docker service links, for Thaw's keys and the app's", async () => {
    const env = {
      SERVER_PORT: "tcp://10.0.0.7:80",
      MAIL_PORT: "tcp://10.0.0.11:25",
      MAIL_PORT_25_TCP: "tcp://10.0.0.11:25",
    };
    const app = await bootstrap({ config: { mail: { port: 25 } }, env });
    assert.deepEqual(app.config, { mail: { port: 25 } });
    // A port given as a number is taken.
    const set = await bootstrap({ config: { mail: { port: 25 } }, env: { MAIL_PORT: "2525" } });
    assert.deepEqual(set.config, { mail: { port: 2525 } });
  });

  it("refuse a variable for Thaw's key where the file holds a value instead of keys", async () => {
    await assert.rejects(
      bootstrap({ config: { app: { openapi: false } }, env: { APP_OPENAPI_PATH: "/x" } }),
      {
        name: "ConfigError",
        message: "environment variable APP_OPENAPI_PATH sets app.openapi.path, but app.openapi " +
          "holds a value, not keys: give app.openapi as keys in the file, or unset " +
          "APP_OPENAPI_PATH",
      },
    );
  });

  it("take Spring Boot's own name too, which drops the dashes", async () => {
    const app = await bootstrap({
      config: { mail: { "retry-count": 1 } },
      env: { SERVER_SHUTDOWNTIMEOUT: "3", MAIL_RETRYCOUNT: "4" },
    });
    assert.deepEqual(app.config, { mail: { "retry-count": 4 }, server: { "shutdown-timeout": 3 } });
  });

  it("read a list of numbers or flags item by item, as the file has them", () => {
    const { values } = applyEnvOverrides(
      { app: { ports: [80], flags: [true] } },
      (name) => ({ APP_PORTS: "80, 443", APP_FLAGS: "false,true" })[name],
      [],
    );
    assert.deepEqual(values, { app: { ports: [80, 443], flags: [false, true] } });
  });

  it("let a dotted key block no nested one, and keep what is not plain data", () => {
    const handler = () => 1;
    const { values } = applyEnvOverrides(
      { mail: { "a.b": 1, a: { b: 2 } }, app: { handler, port: 1 } },
      (name) => ({ MAIL_A_B: "3", APP_PORT: "2" })[name],
      [],
    );
    assert.deepEqual(values, { mail: { "a.b": 1, a: { b: 3 } }, app: { handler, port: 2 } });
  });
});
