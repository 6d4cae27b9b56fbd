// The drift normaliser and differ (src/migrate/search/drift/), without a cluster: what the node
// answers is modelled here from what OpenSearch 2.19 was seen to answer (README "Drift").
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  compareIndex,
  comparePolicy,
  compareTemplate,
  compareWriteAlias,
} from "../../../../src/migrate/search/drift/drift.ts";
import {
  type Difference,
  MAX_DIFFERENCES,
} from "../../../../src/migrate/search/drift/json_diff.ts";
import { aliasMembers } from "../../../../src/migrate/search/drift/alias_rules.ts";
import { differingMappingParts } from "../../../../src/migrate/search/drift/mapping_rules.ts";
import {
  differingSettings,
  flattenSettings,
  isStaticSetting,
} from "../../../../src/migrate/search/drift/settings_rules.ts";
import { renderValue } from "../../../../src/migrate/search/render_value.ts";
import { propertyOptions } from "../../../property.ts";

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// A model of the node's answers

/** Settings as the node answers them: nested under `index`, scalar values as text. */
function clusterSettings(settings: unknown): Json {
  const root: Json = {};
  for (const [key, value] of flattenSettingsModel(settings)) {
    const parts = key.split(".");
    let at = root;
    for (const part of parts.slice(0, -1)) {
      if (!Object.hasOwn(at, part)) Object.defineProperty(at, part, own({}));
      at = at[part] as Json;
    }
    Object.defineProperty(at, parts.at(-1)!, own(value));
  }
  return root;
}

const own = (value: unknown): PropertyDescriptor => ({
  value,
  enumerable: true,
  writable: true,
  configurable: true,
});

// Written apart from the one under test: dotted keys, `index.` prefixed, scalars as text.
function flattenSettingsModel(settings: unknown, prefix = ""): [string, unknown][] {
  if (settings === null || typeof settings !== "object" || Array.isArray(settings)) return [];
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(settings)) {
    const key = prefix === "" ? k : `${prefix}.${k}`;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      out.push(...flattenSettingsModel(v, key));
    } else {
      const text = (x: unknown) => typeof x === "number" || typeof x === "boolean" ? String(x) : x;
      out.push([
        key === "index" || key.startsWith("index.") ? key : `index.${key}`,
        Array.isArray(v) ? v.map(text) : text(v),
      ]);
    }
  }
  return out;
}

function clusterAlias(alias: unknown): unknown {
  if (alias === null || typeof alias !== "object" || !("routing" in alias)) return alias;
  const { routing, ...rest } = alias as Json;
  return { index_routing: routing, search_routing: routing, ...rest };
}

/** What `GET /_index_template/{name}` holds in `index_template` after a PUT of `body`. */
function clusterTemplate(body: Json): Json {
  const out: Json = {
    index_patterns: typeof body.index_patterns === "string"
      ? [body.index_patterns]
      : body.index_patterns,
  };
  const t = body.template as Json | undefined;
  if (t !== undefined) {
    const inner: Json = {};
    if (t.settings !== undefined) inner.settings = clusterSettings(t.settings);
    if (t.mappings !== undefined && Object.keys(t.mappings as Json).length > 0) {
      inner.mappings = t.mappings;
    }
    if (t.aliases !== undefined) {
      inner.aliases = Object.fromEntries(
        Object.entries(t.aliases as Json).map(([k, v]) => [k, clusterAlias(v)]),
      );
    }
    out.template = inner;
  }
  out.composed_of = body.composed_of ?? [];
  for (const k of ["priority", "version", "_meta"]) if (k in body) out[k] = body[k];
  if (body.data_stream !== undefined) {
    out.data_stream = { timestamp_field: { name: "@timestamp" }, ...body.data_stream as Json };
  }
  return out;
}

/** What `GET /{index}` holds for it after `PUT /{index}` with `body`, and the defaults it adds. */
function clusterIndex(body: Json): Json {
  const settings = clusterSettings(body.settings ?? {});
  const index = (settings.index ?? {}) as Json;
  Object.assign(index, {
    uuid: "3NoXvlngQrSVnQXQTPRgMA",
    creation_date: "1795395166050",
    provided_name: "x",
    version: { created: "136407927" },
    replication: { type: "DOCUMENT" },
  });
  if (!("number_of_shards" in index)) index.number_of_shards = "1";
  settings.index = index;
  return {
    aliases: Object.fromEntries(
      Object.entries((body.aliases ?? {}) as Json).map(([k, v]) => [k, clusterAlias(v)]),
    ),
    mappings: clusterMappings(body.mappings ?? {}),
    settings,
  };
}

// The node answers `10` to `"10"` and `false` to `"false"` in a mapping, and leaves parameters
// at their default out (`doc_values: true`, `store: false`, `type: object` beside properties).
function clusterMappings(value: unknown, inFields = false): unknown {
  if (Array.isArray(value)) return value.map((v) => clusterMappings(v));
  if (value !== null && typeof value === "object") {
    const defaults: Json = { doc_values: true, store: false, index: true };
    return Object.fromEntries(
      Object.entries(value).filter(([k, v]) =>
        inFields || !(
          (k in defaults && String(defaults[k]) === String(v)) ||
          (k === "type" && v === "object" && "properties" in value)
        )
      ).map(([k, v]) => [k, clusterMappings(v, k === "properties" && !inFields)]),
    );
  }
  if (value === "true" || value === "false") return value === "true";
  if (typeof value === "string" && /^\d{1,9}$/.test(value)) return Number(value);
  return value;
}

/** What the ISM plugin answers to GET after a PUT of `body`. */
function clusterPolicy(id: string, body: Json): Json {
  const policy = structuredClone(body.policy) as Json;
  const states = Array.isArray(policy.states) ? policy.states as Json[] : [];
  for (const state of states) {
    if (Array.isArray(state.actions)) {
      state.actions = (state.actions as Json[]).map((a) => ({
        retry: { count: 3, backoff: "exponential", delay: "1m" },
        ...a,
      }));
    }
    if (!("transitions" in state)) state.transitions = [];
  }
  const { ism_template, ...rest } = policy;
  return {
    _id: id,
    _version: 3,
    _seq_no: 12,
    _primary_term: 1,
    policy: {
      policy_id: id,
      last_updated_time: 1577990761311,
      schema_version: 21,
      error_notification: null,
      ...rest,
      ism_template: ism_template === undefined
        ? null
        : [{ ...ism_template as Json, last_updated_time: 1577990761311 }],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Generators

const name = fc.stringMatching(/^[a-z][a-z_]{0,5}$/);
const scalar = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.boolean(),
);
// Setting keys with no key a prefix of another (the node cannot hold both `a` and `a.b`).
const settingKeys = fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 3 }), {
  maxLength: 6,
  selector: (parts) => parts.join("."),
}).map((keys) =>
  keys.filter((k, i) =>
    !keys.some((o, j) =>
      i !== j && (o.join(".").startsWith(`${k.join(".")}.`) ||
        k.join(".").startsWith(`${o.join(".")}.`))
    )
  )
);
const settings = fc.tuple(
  settingKeys,
  fc.array(fc.oneof(scalar, fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 })), {
    minLength: 6,
    maxLength: 6,
  }),
  fc.boolean(),
).map(([keys, values, nested]) => {
  const out: Json = {};
  keys.forEach((parts, i) => {
    if (nested) {
      let at = out;
      for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Json;
      at[parts.at(-1)!] = values[i];
    } else out[parts.join(".")] = values[i];
  });
  return out;
});
const field: fc.Arbitrary<Json> = fc.letrec<{ field: Json }>((tie) => ({
  field: fc.oneof(
    { depthSize: "small" },
    fc.record({
      type: fc.constantFrom("keyword", "text", "long", "date"),
      ignore_above: fc.option(fc.oneof(fc.integer({ min: 1, max: 500 }), fc.constant("10")), {
        nil: undefined,
      }),
      index: fc.option(fc.constantFrom(true, false, "false", "true"), { nil: undefined }),
      doc_values: fc.option(fc.boolean(), { nil: undefined }),
      store: fc.option(fc.constantFrom(false, "false", true), { nil: undefined }),
    }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.option(fc.constant("object"), { nil: undefined }),
      properties: fc.dictionary(name, tie("field") as fc.Arbitrary<Json>, { maxKeys: 3 }),
    }, { requiredKeys: ["properties"] }),
  ),
})).field;
const mappings = fc.record({
  dynamic: fc.option(fc.constantFrom("strict", "false", true), { nil: undefined }),
  properties: fc.dictionary(name, field, { maxKeys: 4 }),
}, { requiredKeys: ["properties"] });
const aliases = fc.dictionary(
  name,
  fc.record({
    routing: fc.option(fc.constantFrom("1", "2"), { nil: undefined }),
    is_write_index: fc.option(fc.boolean(), { nil: undefined }),
    filter: fc.option(fc.record({ term: fc.dictionary(name, fc.string({ maxLength: 4 })) }), {
      nil: undefined,
    }),
  }, { requiredKeys: [] }),
  { maxKeys: 2 },
);
const template = fc.record({
  index_patterns: fc.oneof(fc.constant("logs*"), fc.constant(["a*", "b*"])),
  template: fc.record({ settings, mappings, aliases }, { requiredKeys: [] }),
  priority: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  version: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
  _meta: fc.option(fc.dictionary(name, scalar, { maxKeys: 2 }), { nil: undefined }),
  composed_of: fc.option(fc.constantFrom([], ["ct"]), { nil: undefined }),
  data_stream: fc.option(fc.constant({}), { nil: undefined }),
}, { requiredKeys: ["index_patterns"] }).map(stripUndefined);
const index = fc.record({ settings, mappings, aliases }, { requiredKeys: [] }).map(stripUndefined);
const policy = fc.record({
  policy: fc.record({
    description: fc.string({ maxLength: 8 }),
    default_state: fc.constant("hot"),
    states: fc.array(
      fc.record({
        name,
        actions: fc.array(
          fc.oneof(
            fc.record({ rollover: fc.record({ min_doc_count: fc.integer({ min: 1, max: 9 }) }) }),
            fc.constant({ delete: {} }),
          ),
          { maxLength: 2 },
        ),
        transitions: fc.array(
          fc.record({
            state_name: name,
            conditions: fc.record({ min_index_age: fc.constant("5m") }),
          }),
          { maxLength: 2 },
        ),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    ism_template: fc.option(
      fc.record({ index_patterns: fc.constant(["logs*"]), priority: fc.nat(9) }),
      {
        nil: undefined,
      },
    ),
  }).map(stripUndefined),
});

function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

// Every scalar leaf (a list's items included) of `value`, with its path.
function leaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  return [path];
}

function pathText(path: (string | number)[]): string {
  return path.map((p) => typeof p === "number" ? `[${p}]` : `.${p}`).join("").replace(/^\./, "");
}

// Sets the leaf at `path` to a value whose text differs.
function changed(value: unknown, path: (string | number)[]): unknown {
  const copy = structuredClone(value) as Json;
  let at: Json = copy;
  for (const p of path.slice(0, -1)) at = at[p as string] as Json;
  const key = path.at(-1)! as string;
  at[key] = at[key] === null ? "x" : `${String(at[key])}~`;
  return copy;
}

const paths = (d: readonly Difference[]) => d.map((x) => x.path);

// ---------------------------------------------------------------------------------------------

describe("drift: a resource compared with the node's own answer", () => {
  it("finds no difference between a template and what the node answers for it", () => {
    fc.assert(
      fc.property(template, (body) => {
        assert.deepEqual(compareTemplate(body, clusterTemplate(body)), []);
      }),
      propertyOptions(),
    );
  });

  it("finds no difference between an index file and what the node answers for it", () => {
    fc.assert(
      fc.property(index, (body) => {
        assert.deepEqual(compareIndex(body, clusterIndex(body)), []);
      }),
      propertyOptions(),
    );
  });

  it("finds no difference between a policy and what ISM answers for it", () => {
    fc.assert(
      fc.property(policy, (body) => {
        assert.deepEqual(comparePolicy(body, clusterPolicy("p", body)), []);
      }),
      propertyOptions(),
    );
  });
});

describe("drift: a change anywhere is reported there, and only there", () => {
  it("templates: any value of the node's answer", () => {
    fc.assert(
      fc.property(
        template.chain((body) => {
          const live = clusterTemplate(body);
          const all = leaves(live);
          return fc.tuple(fc.constant(body), fc.constant(live), fc.constantFrom(...all));
        }).filter(([, , path]) => path.length > 0),
        ([body, live, path]) => {
          const found = compareTemplate(body, changed(live, path));
          assert.deepEqual(paths(found), [pathText(path)], JSON.stringify(found));
          assert.ok(found[0].fixable, "a template is applied again whole");
        },
      ),
      propertyOptions(),
    );
  });

  it("indices: any value the file sets, in settings, mappings or aliases", () => {
    fc.assert(
      fc.property(
        index.chain((body) => {
          // The node's answer without what it adds: the values the file set.
          const live = clusterIndex(body);
          const declared = {
            settings: clusterSettings(body.settings ?? {}),
            mappings: live.mappings,
            aliases: live.aliases,
          };
          const all = leaves(declared).filter((p) => p.length > 1);
          return all.length === 0
            ? fc.constant(undefined)
            : fc.tuple(fc.constant(body), fc.constant(live), fc.constantFrom(...all));
        }).filter((x) => x !== undefined),
        (x) => {
          const [body, live, path] = x!;
          const found = compareIndex(body, changed(live, path) as Json);
          assert.deepEqual(paths(found), [pathText(path)], JSON.stringify(found));
        },
      ),
      propertyOptions(),
    );
  });

  it("policies: any value the file sets", () => {
    fc.assert(
      fc.property(
        policy.chain((body) => {
          const all = leaves(body).filter((p) => p.length > 1);
          return fc.tuple(fc.constant(body), fc.constantFrom(...all));
        }),
        ([body, path]) => {
          // ISM keeps an ism_template as a list of one.
          const livePath = path[1] === "ism_template"
            ? [...path.slice(0, 2), 0, ...path.slice(2)]
            : path;
          const found = comparePolicy(body, changed(clusterPolicy("p", body), livePath));
          assert.deepEqual(paths(found), [pathText(livePath)], JSON.stringify(found));
        },
      ),
      propertyOptions(),
    );
  });

  it("settings: nested, dotted or mixed, with or without index., are one setting", () => {
    fc.assert(
      fc.property(settings, fc.boolean(), (s, prefixed) => {
        const flat = Object.fromEntries(
          [...flattenSettings(s)].map(([k, v]) => [prefixed ? k : k.replace(/^index\./, ""), v]),
        );
        assert.deepEqual(flattenSettings(flat), flattenSettings(s));
        assert.deepEqual(flattenSettings(clusterSettings(s)), flattenSettings(s));
        assert.deepEqual(
          compareTemplate(
            { index_patterns: ["a*"], template: { settings: s } },
            { index_patterns: ["a*"], template: { settings: flat } },
          ),
          [],
        );
      }),
      propertyOptions(),
    );
  });
});

describe("drift: examples", () => {
  it("says how a template and an index differ, in short lines", () => {
    const file = {
      index_patterns: ["logs*"],
      template: {
        settings: { number_of_shards: 1 },
        mappings: { properties: { note: { type: "keyword" } } },
      },
    };
    const live = clusterTemplate(file);
    ((live.template as Json).settings as { index: Json }).index.number_of_shards = "2";
    assert.deepEqual(compareTemplate(file, live).map((d) => d.text), [
      `template.settings.index.number_of_shards: file "1", cluster "2"`,
    ]);
    delete live.template;
    live._meta = { by: "hand" };
    assert.deepEqual(compareTemplate(file, live).map((d) => d.text), [
      "template: in the file, not in the cluster",
      "_meta: in the cluster, not in the file",
    ]);

    const orders = {
      settings: { number_of_shards: 1, refresh_interval: "5s" },
      mappings: { properties: { note: { type: "keyword", ignore_above: 10 } } },
    };
    const index = clusterIndex(orders);
    const m = index.mappings as { properties: Json };
    m.properties.note = { type: "keyword", ignore_above: 20 };
    m.properties.extra = { type: "integer" };
    ((index.settings as Json).index as Json).number_of_shards = "2";
    ((index.settings as Json).index as Json).refresh_interval = "1s";
    const found = compareIndex(orders, index);
    assert.deepEqual(found.map((d) => [d.text, d.fixable]), [
      [
        `settings.index.number_of_shards: file "1", cluster "2" (a static setting: it cannot ` +
        `change on a live index; needs a reindex migration)`,
        false,
      ],
      [`settings.index.refresh_interval: file "5s", cluster "1s"`, true],
      ["mappings.properties.note.ignore_above: file 10, cluster 20", true],
      [
        "mappings.properties.extra: in the cluster, not in the file (needs a reindex migration: " +
        "a field cannot be removed from a live index)",
        false,
      ],
    ]);
    assert.deepEqual(differingSettings(orders.settings, index.settings), [
      "index.number_of_shards",
      "index.refresh_interval",
    ]);
    assert.deepEqual(differingMappingParts(orders.mappings, index.mappings), [
      { properties: { note: { type: "keyword", ignore_above: 10 } } },
    ]);
  });

  it("ignores what the node adds to an index but not a field, in properties or fields", () => {
    const file = {
      mappings: {
        properties: { t: { type: "text", fields: { raw: { type: "keyword" } } } },
      },
    };
    const live = {
      settings: { index: { uuid: "u", number_of_shards: "1" } },
      mappings: {
        _source: { enabled: true },
        properties: {
          t: {
            type: "text",
            norms: true,
            fields: { raw: { type: "keyword" }, by_hand: { type: "keyword" } },
          },
        },
      },
    };
    assert.deepEqual(paths(compareIndex(file, live)), ["mappings.properties.t.fields.by_hand"]);
    // A type change needs a reindex; a mapping the file does not set is not compared.
    live.mappings.properties.t.type = "keyword";
    const found = compareIndex(file, live);
    assert.equal(found[0].path, "mappings.properties.t.type");
    assert.equal(found[0].fixable, false);
    assert.match(found[0].text, /a field's type cannot change/);
    assert.deepEqual(
      compareIndex({ settings: { refresh_interval: "1s" } }, {
        settings: { index: { refresh_interval: "1s" } },
        mappings: { properties: { dynamic_field: { type: "long" } } },
      }),
      [],
    );
  });

  it("takes what the node left out at its default, and dotted names, as the file's (seen on 2.19)", () => {
    const file = {
      mappings: {
        _source: { enabled: true },
        dynamic: true,
        properties: {
          k: {
            type: "keyword",
            index: true,
            doc_values: true,
            store: false,
            norms: false,
            ignore_above: 2147483647,
            eager_global_ordinals: false,
          },
          t: { type: "text", norms: true, index: true, analyzer: "standard", fielddata: false },
          d: { type: "date", format: "strict_date_optional_time||epoch_millis" },
          l: { type: "long", coerce: true, null_value: null },
          o: { type: "object", enabled: true, properties: { a: { type: "keyword" } } },
          s: { type: "scaled_float", scaling_factor: 100 },
          "user.name": { type: "keyword" },
          "user.age": { type: "long" },
        },
      },
    };
    // The node's answer to GET /{index} after PUT /{index} with `file`.
    const live = JSON.parse(
      `{"dynamic":"true","properties":{"d":{"type":"date"},"k":{"type":"keyword"},` +
        `"l":{"type":"long","coerce":true},"o":{"properties":{"a":{"type":"keyword"}}},` +
        `"s":{"type":"scaled_float","scaling_factor":100.0},` +
        `"t":{"type":"text","analyzer":"standard"},` +
        `"user":{"properties":{"age":{"type":"long"},"name":{"type":"keyword"}}}}}`,
    );
    assert.deepEqual(compareIndex(file, { mappings: live }), []);
    assert.deepEqual(differingMappingParts(file.mappings, live), []);
    // A value other than the default, left out, is a difference; so is a field.
    const other = structuredClone(live);
    delete other.properties.user.properties.age;
    const changed = {
      mappings: {
        properties: { ...file.mappings.properties, k: { type: "keyword", ignore_above: 10 } },
      },
    };
    assert.deepEqual(paths(compareIndex(changed, { mappings: other })), [
      "mappings.properties.k.ignore_above",
      "mappings.properties.user.properties.age",
    ]);
    assert.deepEqual(differingMappingParts(changed.mappings, other), [
      { properties: { k: { type: "keyword", ignore_above: 10 } } },
      {
        properties: { user: { properties: { name: { type: "keyword" }, age: { type: "long" } } } },
      },
    ]);
    // A template keeps the dotted name as written.
    const template = {
      index_patterns: ["a"],
      template: { mappings: { properties: file.mappings.properties } },
    };
    assert.deepEqual(compareTemplate(template, structuredClone(template)), []);
  });

  it("tells a field named properties, type or fields from the parameters of that name", () => {
    const file = {
      mappings: {
        properties: {
          properties: { type: "keyword" },
          fields: { properties: { type: { type: "keyword" } } },
        },
      },
    };
    const live = {
      mappings: {
        properties: {
          properties: { type: "keyword", meta: { a: "1" } },
          fields: { properties: { type: { type: "keyword" }, fields: { type: "long" } } },
        },
      },
    };
    const found = compareIndex(file, live);
    assert.deepEqual(found.map((d) => [d.path, d.fixable]), [
      ["mappings.properties.fields.properties.fields", false],
    ]);
    live.mappings.properties.fields.properties.type.type = "text";
    assert.deepEqual(compareIndex(file, live).map((d) => [d.path, d.fixable]), [
      ["mappings.properties.fields.properties.type.type", false],
      ["mappings.properties.fields.properties.fields", false],
    ]);
  });

  it("names an index that is gone, and aliases it lacks or holds otherwise", () => {
    const file = { aliases: { a: {}, b: { routing: "1" }, c: { is_write_index: true } } };
    const found = compareIndex(file, {
      aliases: { a: {}, b: { index_routing: "1", search_routing: "2" }, other: {} },
    });
    assert.deepEqual(found.map((d) => d.text), [
      `aliases.b.search_routing: file "1", cluster "2"`,
      "aliases.c: in the file, not in the cluster",
    ]);
  });

  it("compares a policy on what its file sets", () => {
    const file = {
      policy: {
        policy_id: "other",
        schema_version: 1,
        description: "d",
        default_state: "hot",
        states: [{ name: "hot", actions: [{ rollover: { min_doc_count: 5 } }], transitions: [] }],
      },
    };
    const live = clusterPolicy("p", file);
    assert.deepEqual(comparePolicy(file, live), []);
    const states = (live.policy as Json).states as Json[];
    states.push({ name: "delete", actions: [], transitions: [] });
    ((states[0].actions as Json[])[0].rollover as Json).min_doc_count = "5";
    const found = comparePolicy(file, live);
    assert.deepEqual(found.map((d) => d.path), ["policy.states"]);
    assert.match(found[0].text, /^policy\.states: file \[\{"name": "hot"/);
  });

  it("checks that a reindex file's alias writes to its new index", () => {
    const answer = (write: string | undefined, ...indices: string[]) =>
      Object.fromEntries(
        indices.map((i) => [i, {
          aliases: { orders: i === write ? { is_write_index: true } : {} },
        }]),
      );
    assert.deepEqual(compareWriteAlias("orders", "v2", answer(undefined, "v2")), []);
    assert.deepEqual(compareWriteAlias("orders", "v2", answer("v2", "v1", "v2")), []);
    assert.deepEqual(
      compareWriteAlias("orders", "v2", answer("v1", "v1", "v2")).map((d) => d.text),
      [`writes to "v1", not to "v2" (the file's new index)`],
    );
    assert.deepEqual(
      compareWriteAlias("orders", "v2", answer("v1", "v1")).map((d) => d.text),
      [`points at "v1", not at "v2" (the file's new index)`],
    );
    assert.deepEqual(compareWriteAlias("orders", "v2", undefined).map((d) => d.text), [
      "absent from the cluster",
    ]);
    assert.deepEqual(
      aliasMembers("orders", { v1: { aliases: { orders: { is_write_index: false } } } }),
      {
        indices: ["v1"],
      },
    );
  });

  it("knows the static settings", () => {
    for (
      const k of ["index.number_of_shards", "index.sort.field", "index.analysis.analyzer.x.type"]
    ) {
      assert.ok(isStaticSetting(k), k);
    }
    for (const k of ["index.number_of_replicas", "index.refresh_interval", "index.sorted"]) {
      assert.ok(!isStaticSetting(k), k);
    }
  });
});

describe("drift: hostile answers", () => {
  it("keeps __proto__ a key: no prototype changes, and it is compared like any key", () => {
    const live = JSON.parse(
      `{"settings": {"index": {"__proto__": {"polluted": "yes"}, "refresh_interval": "1s"}},` +
        ` "mappings": {"properties": {"__proto__": {"type": "keyword"}, "constructor": {}}},` +
        ` "aliases": {"__proto__": {}}}`,
    );
    const file = JSON.parse(
      `{"settings": {"refresh_interval": "1s", "__proto__": {"x": 1}},` +
        ` "mappings": {"properties": {}}, "aliases": {"__proto__": {}, "toString": {}}}`,
    );
    const found = compareIndex(file, live);
    assert.equal(({} as Json).polluted, undefined, "Object.prototype untouched");
    assert.equal(({} as Json).x, undefined);
    assert.deepEqual(paths(found), [
      "settings.index.__proto__.x",
      "mappings.properties.__proto__",
      "mappings.properties.constructor",
      "aliases.toString",
    ]);
    assert.deepEqual([...flattenSettings(live.settings).keys()], [
      "index.refresh_interval",
      "index.__proto__.polluted",
    ]);
    const template = JSON.parse(`{"index_patterns": ["a"], "__proto__": {"priority": 1}}`);
    assert.deepEqual(paths(compareTemplate({ index_patterns: ["a"] }, template)), ["__proto__"]);
    assert.deepEqual(
      comparePolicy(JSON.parse(`{"policy": {"__proto__": {"a": 1}}}`), {
        policy: JSON.parse(`{"__proto__": {"a": 1}}`),
      }),
      [],
    );
  });

  it("survives bodies nested 100,000 deep, and cuts what it prints", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const found = compareIndex(
      {
        settings: { refresh_interval: "1s" },
        mappings: { properties: { f: { type: "keyword" } } },
      },
      {
        settings: { index: { refresh_interval: "1s", deep } },
        mappings: { properties: { f: { type: "keyword" }, deep }, _meta: deep },
      },
    );
    assert.deepEqual(paths(found), ["mappings.properties.deep"]);
    assert.ok(renderValue(deep).length <= 81);
    const template = compareTemplate({ index_patterns: ["a"], _meta: { a: { a: 1 } } }, {
      index_patterns: ["a"],
      _meta: deep,
    });
    assert.deepEqual(paths(template), ["_meta.a.a"]);
    assert.ok(template[0].text.length < 200, template[0].text);
    assert.ok(flattenSettings({ deep }).size === 1);
  });

  it("lists at most MAX_DIFFERENCES, and counts the rest", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 100_000 }, (_, i) => [`f${i}`, { type: "keyword" }]),
    );
    const found = compareIndex({ mappings: { properties: {} } }, { mappings: { properties } });
    assert.equal(found.length, MAX_DIFFERENCES + 1);
    assert.equal(found.at(-1)!.text, `and ${100_000 - MAX_DIFFERENCES} more difference(s)`);
    assert.equal(found.at(-1)!.fixable, false);
  });

  it("tells lists from objects and scalars, and quotes strange keys", () => {
    assert.deepEqual(
      compareTemplate(
        { index_patterns: ["a"], _meta: { l: [1, 2], o: { x: 1 }, s: "1" } },
        { index_patterns: ["a"], _meta: { l: { 0: 1, 1: 2 }, o: [1], s: 1 } },
      ).map((d) => d.text),
      [
        `_meta.l: file [1, 2], cluster {"0": 1, "1": 2}`,
        `_meta.o: file {"x": 1}, cluster [1]`,
      ],
    );
    assert.deepEqual(
      compareTemplate({ index_patterns: ["a"], _meta: [1, 2] }, {
        index_patterns: ["a"],
        _meta: [1],
      })
        .map((d) => d.text),
      ["_meta: file [1, 2], cluster [1]"],
    );
    const key = `a "b"\n${"c".repeat(200)}`;
    const text = compareTemplate({ index_patterns: ["a"] }, {
      index_patterns: ["a"],
      [key]: 1,
    })[0].text;
    assert.ok(text.startsWith(`["a \\"b\\"\\nccc`), text);
    assert.ok(text.length < 120, text);
    assert.deepEqual(compareTemplate("x", { index_patterns: ["a"] }).map((d) => d.path), [""]);
  });
});
