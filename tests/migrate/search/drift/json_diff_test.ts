// The generic JSON diff of drift (src/migrate/search/drift/json_diff.ts), against a small reference
// model written apart from it, and the forms the resource rules bring both sides to before diffing.
// Properties: bounded runs; fast-check prints the seed and the shrunk counterexample on failure,
// and `FC_SEED=<seed>` replays it (tests/property.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type Difference,
  diffJson,
  IN_CLUSTER_ONLY,
  IN_FILE_ONLY,
  type Kind,
  MAX_DIFFERENCES,
  type Rules,
  type Step,
} from "../../../../src/migrate/search/drift/json_diff.ts";
import { aliasesForm } from "../../../../src/migrate/search/drift/alias_rules.ts";
import { expandDottedFields } from "../../../../src/migrate/search/drift/mapping_rules.ts";
import { policyForms } from "../../../../src/migrate/search/drift/policy_rules.ts";
import { settingsForm } from "../../../../src/migrate/search/drift/settings_rules.ts";
import { templateForm } from "../../../../src/migrate/search/drift/template_rules.ts";
import { renderValue } from "../../../../src/migrate/search/render_value.ts";
import { propertyOptions } from "../../../property.ts";

type Json = Record<string, unknown>;
type Key = string | number;

const isObject = (v: unknown): v is Json =>
  v !== null && typeof v === "object" && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// The reference model

/**
 * Three sets of rules, each with what the model makes of it: compare whole; leave the cluster's
 * extra keys out; and one that uses every hook (extra keys only under a key `p`, a note for each
 * kind, a file's `null` under a key starting with `d` taken as the cluster's default).
 */
type Variant = "whole" | "ignore" | "hooks";

const RULES: Record<Variant, Rules> = {
  whole: { extras: "report" },
  ignore: { extras: "ignore" },
  hooks: {
    extras: (at: Step | undefined) => at !== undefined && at.key === "p",
    classify: (step: Step, kind: Kind) => classifyModel(step.key, kind),
    absentIsDefault: (key: string, value: unknown) => key.startsWith("d") && value === null,
  },
};

function classifyModel(key: Key, kind: Kind): { note?: string; fixable: boolean } {
  if (kind === "extra") return { note: "extra", fixable: false };
  if (kind === "missing") return { note: "missing", fixable: true };
  return { fixable: typeof key !== "number" };
}

const PLAIN = /^[A-Za-z0-9_@$][A-Za-z0-9_@$.\-]{0,99}$/;

function pathModel(path: readonly Key[]): string {
  return path.map((k) =>
    typeof k === "number"
      ? `[${k}]`
      : PLAIN.test(k)
      ? `.${k}`
      : `[${JSON.stringify(k.length > 60 ? `${k.slice(0, 60)}…` : k)}]`
  ).join("").replace(/^\./, "");
}

// Two scalars are the same when they are, or when both are text, numbers or booleans of one text.
function sameScalarModel(a: unknown, b: unknown): boolean {
  const textual = (v: unknown) =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  return a === b || (textual(a) && textual(b) && String(a) === String(b));
}

/** The differences, recursively: what json_diff.ts does iteratively, bounded and all. */
function model(file: unknown, cluster: unknown, variant: Variant, at?: string): Difference[] {
  const found: { path: Key[]; kind: Kind; body: string }[] = [];
  const go = (f: unknown, c: unknown, path: Key[]) => {
    if (isObject(f) && isObject(c)) {
      for (const k of Object.keys(f)) {
        if (Object.hasOwn(c, k)) go(f[k], c[k], [...path, k]);
        else if (!(variant === "hooks" && k.startsWith("d") && f[k] === null)) {
          found.push({ path: [...path, k], kind: "missing", body: IN_FILE_ONLY });
        }
      }
      const extras = variant === "whole" || variant === "hooks" && path.at(-1) === "p";
      for (const k of Object.keys(c)) {
        if (extras && !Object.hasOwn(f, k)) {
          found.push({ path: [...path, k], kind: "extra", body: IN_CLUSTER_ONLY });
        }
      }
    } else if (Array.isArray(f) && Array.isArray(c) && f.length === c.length) {
      f.forEach((x, i) => go(x, c[i], [...path, i]));
    } else if (
      Array.isArray(f) || Array.isArray(c) || isObject(f) || isObject(c) || !sameScalarModel(f, c)
    ) {
      found.push({
        path,
        kind: "changed",
        body: `file ${renderValue(f)}, cluster ${renderValue(c)}`,
      });
    }
  };
  go(file, cluster, at === undefined ? [] : [at]);
  const all = found.map(({ path, kind, body }): Difference => {
    const c = path.length === 0 || variant !== "hooks"
      ? { fixable: true }
      : classifyModel(path.at(-1)!, kind);
    const p = pathModel(path);
    const note = c.note === undefined ? "" : ` (${c.note})`;
    return { path: p, text: `${p === "" ? "" : `${p}: `}${body}${note}`, fixable: c.fixable };
  });
  if (all.length <= MAX_DIFFERENCES) return all;
  const rest = all.slice(MAX_DIFFERENCES);
  return [...all.slice(0, MAX_DIFFERENCES), {
    path: "",
    text: `and ${rest.length} more difference(s)`,
    fixable: rest.some((d) => d.fixable),
  }];
}

// ---------------------------------------------------------------------------------------------
// Generators

// Longer than a report shows, and quoted: not a plain key.
const LONG_KEY = "a long key, ".repeat(8);
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a", "b", "p", "d", "dx", "0", "a.b", "x-y") },
  {
    weight: 2,
    arbitrary: fc.constantFrom("__proto__", "constructor", "", "x y", 'q"', "é", "[0]", ".a"),
  },
  { weight: 1, arbitrary: fc.constant(LONG_KEY) },
  { weight: 2, arbitrary: fc.string({ maxLength: 4 }) },
);
const scalar = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    "null",
    true,
    false,
    0,
    1,
    10,
    "1",
    "10",
    "true",
    "false",
    "",
    "x",
  ),
  fc.integer({ min: -20, max: 20 }),
  fc.string({ maxLength: 3 }),
);
// Objects are built with Object.fromEntries: `__proto__` is an own key, as JSON.parse makes it.
const objectOf = (value: fc.Arbitrary<unknown>, maxLength: number) =>
  fc.uniqueArray(fc.tuple(key, value), { maxLength, selector: ([k]) => k })
    .map((entries) => Object.fromEntries(entries) as unknown);
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("json"), { maxLength: 3 }),
    objectOf(tie("json"), 4),
  ),
}));

// The text twin of a scalar, as the cluster answers it: `10` for `"10"`, `"true"` for `true`.
const twin = (v: unknown) => typeof v === "number" || typeof v === "boolean" ? String(v) : v;

/** A value near `v`: mostly the same, some values changed or as text, keys dropped or added. */
function near(v: unknown): fc.Arbitrary<unknown> {
  if (Array.isArray(v)) {
    return fc.tuple(fc.tuple(...v.map(near)), fc.option(json, { freq: 5, nil: undefined }))
      .map(([items, more]) => more === undefined ? items : [...items, more]);
  }
  if (isObject(v)) {
    const kept = Object.entries(v).map(([k, x]) =>
      fc.option(near(x).map((y) => [k, y] as const), { freq: 6, nil: undefined })
    );
    return fc.tuple(fc.tuple(...kept), fc.array(fc.tuple(key, json), { maxLength: 1 }))
      .map(([entries, added]) => {
        const out = new Map<string, unknown>();
        for (const e of entries) if (e !== undefined) out.set(e[0], e[1]);
        for (const [k, x] of added) if (!out.has(k)) out.set(k, x);
        return Object.fromEntries(out);
      });
  }
  return fc.oneof(
    { weight: 5, arbitrary: fc.constant(v) },
    { weight: 2, arbitrary: fc.constant(twin(v)) },
    { weight: 1, arbitrary: scalar },
  );
}

/** Two values to compare: unrelated, or one near the other. */
const pair: fc.Arbitrary<[unknown, unknown]> = fc.oneof(
  fc.tuple(json, json),
  json.chain((f) => fc.tuple(fc.constant(f), near(f))),
  json.chain((f) => fc.tuple(near(f), fc.constant(f))),
);
const variant = fc.constantFrom<Variant>("whole", "ignore", "hooks");
const at = fc.option(fc.constantFrom("policy", "p", "x y"), { nil: undefined });

/** `value` with the keys of each object in another order (`seed` picks it); lists as they are. */
function reorder(value: unknown, seed: number): unknown {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8;
  const go = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(go);
    if (!isObject(v)) return v;
    const entries = Object.entries(v).map(([k, x]) => [k, go(x)] as [string, unknown]);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [entries[i], entries[j]] = [entries[j], entries[i]];
    }
    return Object.fromEntries(entries);
  };
  return go(value);
}

// ---------------------------------------------------------------------------------------------
// Paths back to values

/** The steps of a path as the report writes it; a plain part may hold dots of its own keys. */
function parsePath(text: string): ({ plain: string } | { index: number } | { quoted: string })[] {
  const out: ({ plain: string } | { index: number } | { quoted: string })[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('["', i)) {
      let j = i + 2;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out.push({ quoted: JSON.parse(text.slice(i + 1, j + 1)) });
      assert.equal(text[j + 1], "]", text);
      i = j + 2;
    } else if (text[i] === "[") {
      const j = text.indexOf("]", i);
      out.push({ index: Number(text.slice(i + 1, j)) });
      i = j + 1;
    } else {
      const start = text[i] === "." ? i + 1 : i;
      let j = start;
      while (j < text.length && text[j] !== "[") j++;
      out.push({ plain: text.slice(start, j) });
      i = j;
    }
  }
  return out;
}

/** Whether some reading of `path` (a plain part `a.b` is key `a.b`, or `a` then `b`) is in `value`. */
function holds(value: unknown, path: string): boolean {
  const steps = parsePath(path);
  const go = (v: unknown, n: number, rest?: string): boolean => {
    if (rest !== undefined && rest !== "") {
      if (!isObject(v)) return false;
      return Object.keys(v).some((k) =>
        (rest === k || rest.startsWith(`${k}.`)) &&
        go(v[k], n, rest === k ? undefined : rest.slice(k.length + 1))
      );
    }
    if (n === steps.length) return true;
    const s = steps[n];
    if ("plain" in s) return go(v, n + 1, s.plain);
    if ("index" in s) return Array.isArray(v) && s.index < v.length && go(v[s.index], n + 1);
    if (!isObject(v)) return false;
    return Object.keys(v).some((k) =>
      (k === s.quoted || k.length > 60 && s.quoted === `${k.slice(0, 60)}…`) && go(v[k], n + 1)
    );
  };
  return go(value, 0);
}

const moreLine = /^and (\d+) more difference\(s\)$/;

/** How many differences a list stands for: those listed, and those counted. */
function total(found: readonly Difference[]): number {
  const last = found.at(-1);
  const more = last !== undefined && last.path === "" ? moreLine.exec(last.text) : null;
  return more === null ? found.length : found.length - 1 + Number(more[1]);
}

// What a difference is, where, and whether a re-apply fixes it: all but how the values show,
// which is the order each side holds its keys in.
const kindOf = (d: Difference) =>
  d.text.includes(IN_FILE_ONLY)
    ? "missing"
    : d.text.includes(IN_CLUSTER_ONLY)
    ? "extra"
    : "changed";
const sorted = (found: readonly Difference[]) =>
  found.map((d) => JSON.stringify([d.path, kindOf(d), d.fixable])).sort();

// ---------------------------------------------------------------------------------------------

describe("json diff: against a reference model", () => {
  it("lists what the model lists, in its order, bounded the same way", () => {
    fc.assert(
      fc.property(pair, variant, at, ([f, c], v, root) => {
        assert.deepEqual(
          diffJson(f, c, { rules: RULES[v], at: root === undefined ? undefined : { key: root } }),
          model(f, c, v, root),
        );
      }),
      propertyOptions(300),
    );
  });

  it("finds nothing between a value and itself, or a copy of it with scalars as text", () => {
    const asText = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(asText)
        : isObject(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asText(x)]))
        : twin(v);
    fc.assert(
      fc.property(json, variant, at, (value, v, root) => {
        const options = { rules: RULES[v], at: root === undefined ? undefined : { key: root } };
        assert.deepEqual(diffJson(value, value, options), []);
        assert.deepEqual(diffJson(value, structuredClone(value), options), []);
        assert.deepEqual(diffJson(value, asText(value), options), []);
        assert.deepEqual(diffJson(asText(value), value, options), []);
      }),
      propertyOptions(),
    );
  });

  it("reports only paths that are in one of the two values", () => {
    fc.assert(
      fc.property(pair, variant, ([f, c], v) => {
        for (const d of diffJson(f, c, { rules: RULES[v] })) {
          assert.ok(holds(f, d.path) || holds(c, d.path), `${d.path} (${d.text})`);
        }
      }),
      propertyOptions(300),
    );
  });

  it("is insensitive to the order of keys, on either side (but for how a value shows)", () => {
    fc.assert(
      fc.property(pair, variant, fc.integer(), fc.integer(), ([f, c], v, s1, s2) => {
        const options = { rules: RULES[v] };
        const found = diffJson(f, c, options);
        const again = diffJson(reorder(f, s1), reorder(c, s2), options);
        assert.equal(total(again), total(found));
        if (total(found) <= MAX_DIFFERENCES) assert.deepEqual(sorted(again), sorted(found));
      }),
      propertyOptions(300),
    );
  });

  it("lists at most MAX_DIFFERENCES, and counts the rest", () => {
    const many = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`k${i}`, i]));
    const found = diffJson({}, many);
    assert.equal(found.length, MAX_DIFFERENCES + 1);
    assert.equal(total(found), 120);
    assert.deepEqual(found.at(-1), {
      path: "",
      text: `and ${120 - MAX_DIFFERENCES} more difference(s)`,
      fixable: true,
    });
    assert.deepEqual(found, model({}, many, "whole"));
  });

  it("reads the paths it writes (the test's own parser)", () => {
    assert.ok(holds({ "a.b": { c: [0, { "x y": 1 }] } }, 'a.b.c[1]["x y"]'));
    assert.ok(holds({ a: { b: { c: [0, { "x y": 1 }] } } }, 'a.b.c[1]["x y"]'));
    assert.ok(!holds({ a: { b: 1 } }, "a.c"));
    assert.ok(holds({ [LONG_KEY]: 1 }, `["${LONG_KEY.slice(0, 60)}…"]`));
  });
});

// ---------------------------------------------------------------------------------------------
// The forms

const ruleKey = fc.constantFrom(
  "index_patterns",
  "composed_of",
  "data_stream",
  "timestamp_field",
  "template",
  "settings",
  "mappings",
  "aliases",
  "properties",
  "fields",
  "type",
  "index",
  "number_of_shards",
  "routing",
  "index_routing",
  "search_routing",
  "policy",
  "policy_id",
  "schema_version",
  "ism_template",
  "a",
  "b",
  "a.b",
  "user.name",
  "a..b",
  ".x",
  "x.",
  "__proto__",
  "",
);
const { ruleJson } = fc.letrec<{ ruleJson: unknown }>((tie) => ({
  ruleJson: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("ruleJson"), { maxLength: 2 }),
    fc.uniqueArray(fc.tuple(ruleKey, tie("ruleJson")), { maxLength: 4, selector: ([k]) => k })
      .map((entries) => Object.fromEntries(entries) as unknown),
  ),
}));
// Bodies with the shape the forms look at, and anything in their places.
const templateBody = fc.record({
  index_patterns: fc.oneof(fc.constant("a*"), fc.constant(["a*"]), ruleJson),
  composed_of: fc.oneof(fc.constant([]), ruleJson),
  data_stream: fc.oneof(fc.constant({}), ruleJson),
  template: fc.oneof(
    fc.record({ settings: ruleJson, mappings: ruleJson, aliases: ruleJson }, {
      requiredKeys: [],
    }),
    ruleJson,
  ),
}, { requiredKeys: [] });
const body = fc.oneof(ruleJson, templateBody);

/** `form` applied to its own result changes nothing, nor does the diff see a difference. */
function idempotent(form: (v: unknown) => unknown, value: unknown): void {
  const once = form(value);
  const twice = form(once);
  assert.deepEqual(twice, once);
  assert.deepEqual(diffJson(twice, once), []);
}

describe("json diff: the forms both sides are brought to, applied twice, change nothing", () => {
  it("a template's form (template_rules.ts)", () => {
    fc.assert(fc.property(body, (b) => idempotent(templateForm, b)), propertyOptions(300));
  });

  it("settings flattened (settings_rules.ts)", () => {
    fc.assert(fc.property(body, (b) => idempotent(settingsForm, b)), propertyOptions(300));
  });

  it("a mapping's dotted fields expanded (mapping_rules.ts)", () => {
    fc.assert(fc.property(body, (b) => idempotent(expandDottedFields, b)), propertyOptions(300));
  });

  it("aliases' routing split (alias_rules.ts)", () => {
    fc.assert(fc.property(body, (b) => idempotent(aliasesForm, b)), propertyOptions(300));
  });

  it("a policy without what ISM keeps (policy_rules.ts)", () => {
    fc.assert(
      fc.property(body, ruleJson, (b, live) => {
        const form = (v: unknown) => policyForms({ policy: v }, { policy: live })[0];
        idempotent(form, b);
      }),
      propertyOptions(300),
    );
  });
});
