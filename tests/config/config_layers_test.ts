import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ConfigValues } from "../../src/config/config_values.ts";
import {
  type ConfigLayer,
  mergeLayers,
  profileFileName,
  profileList,
} from "../../src/config/config_layers.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { propertyOptions } from "../property.ts";

const key = fc.constantFrom("a", "b", "c");
const leaf = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 3 }),
  fc.constant(null),
  fc.array(fc.nat(), { maxLength: 2 }),
);
const tree: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.dictionary(key, tie("node"), { maxKeys: 3, noNullPrototype: true }),
  ),
})).node;
const doc = fc.dictionary(key, tree, { maxKeys: 3, noNullPrototype: true }) as fc.Arbitrary<
  ConfigValues
>;

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

// The model: a later mapping merges into an earlier mapping key by key; anything else wins whole.
function modelMerge(base: unknown, over: unknown): unknown {
  if (!isMapping(base) || !isMapping(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? modelMerge(base[k], v) : v;
  return out;
}

// Every key of a document, dotted, each with the layer that set it in the model.
function keysOf(value: unknown, prefix = ""): string[] {
  if (!isMapping(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const key = prefix === "" ? k : `${prefix}.${k}`;
    return [key, ...keysOf(v, key)];
  });
}

function layer(values: ConfigValues, source: string): ConfigLayer {
  // Each key's line is its position in the file's key list: enough to tell layers apart.
  return { values, source, lines: new Map(keysOf(values).map((k, i) => [k, i + 1])) };
}

describe("mergeLayers", () => {
  it("equals the model, and each key's line and file is the layer that set its value", () => {
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 4 }), (docs) => {
        const layers = docs.map((d, i) => layer(d, `f${i}`));
        const merged = mergeLayers(layers);
        const expected = docs.reduce<unknown>((acc, d) => modelMerge(acc, d), {});
        assert.deepEqual(merged.values, expected);
        for (const key of keysOf(expected)) {
          // The last layer that holds the key as a value, not as a mapping merged into.
          const path = key.split(".");
          const valueOf = (d: unknown) =>
            path.reduce<unknown>((n, p) => isMapping(n) && p in n ? n[p] : undefined, d);
          const holders = docs.map((d, i) => [i, valueOf(d)] as const)
            .filter(([, v]) => v !== undefined);
          const setBy = holders.findLast(([, v]) => !isMapping(v))?.[0] ??
            holders.find(([, v]) => isMapping(v))![0];
          // A key whose value is a mapping merged from several layers keeps its first line.
          const owner = isMapping(valueOf(expected)) ? undefined : setBy;
          if (owner === undefined) continue;
          assert.equal(merged.lines.get(key), layers[owner].lines.get(key), key);
          assert.equal(merged.origins.get(key), owner === 0 ? undefined : `f${owner}`, key);
        }
      }),
      propertyOptions(200),
    );
  });

  it("gives a key replaced whole, and all under it, to the layer that replaced it", () => {
    // Found by the property: a.b was the second file's, then the third replaced a.
    const merged = mergeLayers([
      layer({ a: {} }, "f0"),
      layer({ a: { b: 0 } }, "f1"),
      layer({ a: [] }, "f2"),
      layer({ a: { b: { c: 0 } } }, "f3"),
    ]);
    assert.equal(merged.origins.get("a.b.c"), "f3");
    assert.equal(merged.lines.get("a.b.c"), 3);
  });

  it("replaces a list whole, and a value with a mapping", () => {
    const merged = mergeLayers([
      layer({ a: { b: [1, 2, 3], c: 1 } }, "application.yml"),
      layer({ a: { b: [9], c: { d: 1 } } }, "application-prod.yml"),
    ]);
    assert.deepEqual(merged.values, { a: { b: [9], c: { d: 1 } } });
    assert.equal(merged.origins.get("a.c.d"), "application-prod.yml");
  });
});

describe("profileList", () => {
  it("takes a list or names separated by commas, once each, empty items dropped", () => {
    assert.deepEqual(profileList("prod, eu,,prod", "x"), ["prod", "eu"]);
    assert.deepEqual(profileList(["dev"], "x"), ["dev"]);
    assert.deepEqual(profileList(undefined, "x"), []);
    assert.deepEqual(profileList("", "x"), []);
  });

  it("refuses a name that is no plain file name part, for every byte", () => {
    for (let code = 0; code < 256; code++) {
      const c = String.fromCharCode(code);
      const ok = /[A-Za-z0-9_.-]/.test(c);
      if (c === "," || c.trim() === "") continue;
      const take = () => profileList(`p${c}`, "THAW_PROFILES_ACTIVE");
      if (ok) assert.deepEqual(take(), [`p${c}`]);
      else assert.throws(take, ConfigError, `byte ${code}`);
    }
    assert.throws(() => profileList("../etc", "x"), /is not a profile name/);
    assert.throws(() => profileList(".hidden", "x"), /is not a profile name/);
    assert.throws(() => profileList([1], "x"), /must be a list of profile names/);
  });
});

describe("profileFileName", () => {
  it("puts the profile before the extension, beside the file", () => {
    assert.equal(profileFileName("/c/application.yml", "prod"), "/c/application-prod.yml");
    assert.equal(profileFileName("/c/app.config.yaml", "dev"), "/c/app.config-dev.yaml");
    assert.equal(profileFileName("/c.d/application", "dev"), "/c.d/application-dev");
    assert.equal(profileFileName("/c/.env", "dev"), "/c/.env-dev");
  });
});
