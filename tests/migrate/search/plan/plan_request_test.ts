import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { planRequest } from "../../../../src/migrate/search/plan/plan_request.ts";
import { MigrationFileError } from "../../../../src/migrate/migration_error.ts";
import fc from "fast-check";
import { propertyOptions } from "../../../property.ts";

const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const plan = (path: string, value: unknown) => planRequest(path, bytes(value));
const rejects = (path: string, value: unknown, pattern: RegExp) =>
  assert.throws(() => plan(path, value), (e: unknown) => {
    assert.ok(e instanceof MigrationFileError, `not a MigrationFileError: ${e}`);
    assert.equal(e.file, path);
    assert.ok(e.message.startsWith(`${path}: `), e.message);
    assert.match(e.message, pattern);
    return true;
  });

describe("planRequest: values JSON.parse would change", () => {
  it("refuses an integer it cannot send exactly, naming it and its line", () => {
    rejects(
      "a.json",
      '{"method": "POST", "path": "/x/_doc/1",\n "body": {"id": 9007199254740993}}',
      /line 2: the number 9007199254740993 cannot be sent exactly.*write it as a string/,
    );
    rejects("a.json", '{"settings": {"n": 1e400}}', /line 1: the number 1e400 is out of range/);
    rejects(
      "a.json",
      '{"a": 123456789.123456789}',
      /the number 123456789\.123456789 cannot be sent exactly/,
    );
    rejects("a.json", '{"a": 900719925474099.3}', /cannot be sent exactly/);
    rejects("a.json", '{"a": 1e-400}', /the number 1e-400 cannot be sent exactly.*becomes 0/);
    rejects("a.json", '{"settings": {"n": -1E+309}}', /the number -1E\+309 is out of range/);
    // Of a key written twice JSON.parse keeps the last: the file would go where its reader does
    // not look.
    rejects(
      "a.json",
      '{"method": "PUT",\n "path": "/bad-a",\n "path": "/_cluster/settings", "body": {}}',
      /^a\.json: line 3: the key "path" appears twice in one object/,
    );
    // Exact ones pass: the largest safe integer, decimals, exponents in range, digits in strings.
    const r = plan(
      "a.json",
      '{"settings": {"a": 9007199254740991, "b": 0.1, "c": 1e300, "d": "12345678901234567890"}}',
    );
    assert.deepEqual(r.body, {
      settings: { a: 9007199254740991, b: 0.1, c: 1e300, d: "12345678901234567890" },
    });
  });

  it("refuses a lone surrogate and nesting deeper than OpenSearch reads", () => {
    rejects("a.json", '{"settings": {"a": "\\ud800"}}', /lone surrogate/);
    rejects(
      "a.json",
      `{"settings": ${"[".repeat(1001)}${"]".repeat(1001)}}`,
      /nests deeper than 1000/,
    );
    plan("a.json", `{"settings": {"a": ${"[".repeat(990)}${"]".repeat(990)}}}`);
  });
});

describe("planRequest: envelopes", () => {
  it("sends an envelope as a raw request, whatever the file name", () => {
    const r = plan("x/logs-template.json", {
      method: "put",
      path: "/users/_mapping",
      body: { a: 1 },
    });
    assert.deepEqual(r, {
      kind: "request",
      method: "PUT",
      path: "/users/_mapping",
      body: { a: 1 },
    });
  });

  it("keeps the envelope's name and allows a query string", () => {
    const r = plan("a.json", { method: "POST", path: "/_aliases?timeout=5s", name: "aliases" });
    assert.equal(r.name, "aliases");
    assert.equal(r.path, "/_aliases?timeout=5s");
    assert.equal(r.body, undefined);
  });

  it("marks POST, DELETE and PATCH envelopes run-once, unless repeatable", () => {
    for (const method of ["POST", "delete", "PATCH"]) {
      assert.equal(plan("a.json", { method, path: "/x/_doc/1" }).runOnce, true, method);
      const repeatable = plan("a.json", { method, path: "/x/_doc/1", repeatable: true });
      assert.equal(repeatable.runOnce, undefined, method);
      assert.equal(
        plan("a.json", { method, path: "/x", repeatable: false }).runOnce,
        true,
        "repeatable: false is the default",
      );
    }
    for (const method of ["PUT", "GET", "HEAD"]) {
      assert.equal(plan("a.json", { method, path: "/x" }).runOnce, undefined, method);
    }
    assert.equal(plan("logs-template.json", { index_patterns: ["l*"] }).runOnce, undefined);
    rejects(
      "a.json",
      { method: "POST", path: "/x", repeatable: "yes" },
      /repeatable must be true or false/,
    );
  });

  it("refuses an envelope without method or path", () => {
    rejects("a.json", { path: "/x" }, /no method/);
    rejects("a.json", { method: "PUT" }, /no path/);
    rejects("a.json", { method: "", path: "/x" }, /no method/);
    rejects("a.json", { method: 1, path: "/x" }, /no method/);
  });

  it("refuses an unknown method and an unknown key", () => {
    rejects("a.json", { method: "TRACE", path: "/x" }, /method "TRACE" is not one of/);
    rejects("a.json", { method: "PUT", path: "/x", bdoy: {} }, /unknown key "bdoy"/);
  });

  it("refuses paths with a scheme, a host, or tricks", () => {
    for (
      const path of [
        "http://evil/x",
        "//evil/x",
        "x",
        "",
        "/a/../b",
        "/a/%2e%2e/b",
        "/a%2Fb",
        "/a\\b",
        "/a b",
        "/a\nb",
        "/a#b",
        "/%zz",
      ]
    ) {
      assert.throws(() => plan("a.json", { method: "GET", path }), MigrationFileError, path);
    }
    rejects("a.json", { method: "GET", path: "https://h/x" }, /single "\/"/);
  });

  it("refuses a body that is not an object, and a body on GET", () => {
    rejects("a.json", { method: "PUT", path: "/x", body: [1] }, /body must be a JSON object/);
    rejects("a.json", { method: "PUT", path: "/x", body: "s" }, /body must be a JSON object/);
    rejects("a.json", { method: "GET", path: "/x", body: {} }, /cannot have a body/);
    rejects("a.json", { method: "PUT", path: "/x", name: 3 }, /name must be/);
  });
});

describe("planRequest: templates", () => {
  it("sends a full composable template (-template.json) as it is", () => {
    const doc = { index_patterns: ["logs-*"], template: { settings: {} }, priority: 5 };
    assert.deepEqual(plan("logs-template.json", doc), {
      kind: "template",
      method: "PUT",
      path: "/_index_template/logs",
      body: doc,
      name: "logs",
    });
  });

  it("wraps a raw definition with index_patterns [name*], keeping template-level keys on top", () => {
    const r = plan("dir/Metrics-template.json", {
      settings: { a: 1 },
      mappings: { b: 2 },
      aliases: { c: {} },
      priority: 3,
    });
    // Lowercased like index names: the cluster refuses upper case in a template name, and an
    // upper-case pattern would match no index.
    assert.equal(r.path, "/_index_template/metrics");
    assert.equal(r.name, "metrics");
    assert.deepEqual(r.body, {
      index_patterns: ["metrics*"],
      priority: 3,
      template: { settings: { a: 1 }, mappings: { b: 2 }, aliases: { c: {} } },
    });
  });

  it("lets an explicit index_patterns override the default when wrapping", () => {
    const r = plan("logs-template.json", { index_patterns: ["app-*"], mappings: {} });
    assert.deepEqual(r.body, { index_patterns: ["app-*"], template: { mappings: {} } });
  });

  it("classifies a document with index_patterns as a template by content", () => {
    const r = plan("shared.json", { index_patterns: ["s-*"], template: {} });
    assert.equal(r.kind, "template");
    assert.equal(r.path, "/_index_template/shared");
  });

  it("refuses bad index_patterns and templates that define nothing", () => {
    rejects("a-template.json", { index_patterns: [] }, /non-empty list/);
    rejects("a-template.json", { index_patterns: [1] }, /non-empty list/);
    rejects("a-template.json", { priority: 1 }, /without index_patterns/);
    rejects("a-template.json", { settings: {}, template: {} }, /both "template"/);
    rejects("a-template.json", { settings: {}, oops: 1 }, /unknown key "oops"/);
  });
});

describe("planRequest: the .json suffix in any case", () => {
  it("derives the same name from X.JSON as from X.json, as the folder reads both", () => {
    const index = { settings: { number_of_shards: 1 } };
    assert.equal(plan("users.JSON", index).path, "/users");
    assert.equal(
      plan("logs-template.Json", { index_patterns: ["l*"] }).path,
      "/_index_template/logs",
    );
    const policy = { policy: { states: [] } };
    assert.equal(plan("hot-policy.JSON", policy).path, "/_plugins/_ism/policies/hot");
    rejects("v2/products-reindex.JSON", {}, /reindex needs "alias"/);
  });
});

describe("planRequest: template names", () => {
  it("lowercases a template name, as the cluster takes only lower case", () => {
    const r = plan("Logs-Template.json", { index_patterns: ["logs-*"] });
    assert.equal(r.kind, "template");
    assert.equal(r.path, "/_index_template/logs-template");
    assert.equal(plan("ÉTÉ-template.json", { index_patterns: ["e*"] }).name, "été");
  });

  it("refuses, naming the file and the rule, a name the cluster refuses", () => {
    const doc = { index_patterns: ["x*"] };
    rejects("My Logs-template.json", doc, /template name "my logs".*must not contain a space/);
    rejects("a#b-template.json", doc, /template name "a#b".*must not contain "#"/);
    rejects("a*b-template.json", doc, /must not contain "\*"/);
    rejects("a,b-template.json", doc, /must not contain ","/);
    rejects("_a-template.json", doc, /template name "_a".*must not start with "_"/);
    rejects("a b.json", doc, /template name "a b"/); // a template by content
  });
});

describe("planRequest: names (property)", () => {
  // Letters that cannot spell a suffix (-template, -policy, -index), with every character the
  // cluster treats specially in some name.
  const stemArb = fc.string({
    unit: fc.constantFrom(...'aZéÉ0-+_. #*,?:"<>|\\'.split("")),
    minLength: 1,
    maxLength: 12,
  });
  const SPECIAL = /[ ,#*]/;
  // The cluster's rules (MetadataIndexTemplateService.validate; MetadataCreateIndexService),
  // stated apart from the planner's: checked against the real node in plan_names_test.ts.
  const templateOk = (n: string) =>
    n !== "." && n !== ".." && !SPECIAL.test(n) && !n.startsWith("_") && n === n.toLowerCase();
  const indexOk = (n: string) =>
    n !== "." && n !== ".." && !/[\\/*?"<>| ,#:]/.test(n) && !/^[_\-+]/.test(n) &&
    n === n.toLowerCase() && new TextEncoder().encode(n).length <= 255;
  const outcome = (path: string, doc: unknown) => {
    try {
      return plan(path, doc);
    } catch (error) {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.ok(error.message.startsWith(`${path}: `), error.message);
      return undefined;
    }
  };

  it("plans a template exactly when the cluster takes its lowercased name", () => {
    fc.assert(
      fc.property(stemArb, (stem) => {
        const r = outcome(`${stem}-template.json`, { index_patterns: ["x*"] });
        const name = stem.toLowerCase();
        assert.equal(r !== undefined, templateOk(name), `"${stem}" -> ${r?.path}`);
        if (r) {
          assert.equal(r.name, name);
          assert.equal(r.path, `/_index_template/${encodeURIComponent(name)}`);
        }
      }),
      propertyOptions(500),
    );
  });

  it("plans an index exactly when the cluster takes its lowercased name", () => {
    fc.assert(
      fc.property(stemArb, (stem) => {
        const r = outcome(`${stem}-index.json`, { mappings: {} });
        const name = stem.toLowerCase();
        assert.equal(r !== undefined, indexOk(name), `"${stem}" -> ${r?.path}`);
        if (r) assert.equal(r.path, `/${encodeURIComponent(name)}`);
      }),
      propertyOptions(500),
    );
  });

  it("keeps a policy id as it is: any name but a dot segment, up to 512 bytes", () => {
    fc.assert(
      fc.property(stemArb, (stem) => {
        const r = outcome(`${stem}-policy.json`, { policy: {} });
        assert.equal(r !== undefined, stem !== "." && stem !== "..", stem);
        if (r) assert.equal(r.path, `/_plugins/_ism/policies/${encodeURIComponent(stem)}`);
      }),
      propertyOptions(500),
    );
  });
});

describe("planRequest: policies", () => {
  it("sends a -policy.json with a policy object to the ISM API", () => {
    const doc = { policy: { description: "d", states: [] } };
    assert.deepEqual(plan("hot-warm-policy.json", doc), {
      kind: "policy",
      method: "PUT",
      path: "/_plugins/_ism/policies/hot-warm",
      body: doc,
      name: "hot-warm",
    });
  });

  it("wraps a bare policy definition, and classifies {policy} by content", () => {
    assert.deepEqual(plan("p-policy.json", { states: [] }).body, { policy: { states: [] } });
    assert.equal(plan("retention.json", { policy: {} }).kind, "policy");
  });

  it("refuses a policy id longer than the 512 bytes of a document id", () => {
    // The ISM plugin stores a policy as a document whose id is the policy id.
    const long = "é".repeat(257);
    rejects(`${long}-policy.json`, { policy: {} }, /policy id .* is 514 bytes; at most 512/);
    assert.equal(plan(`${"é".repeat(256)}-policy.json`, { policy: {} }).name, "é".repeat(256));
  });

  it("keeps the case of a policy id: the cluster takes it, and indices refer to it", () => {
    assert.equal(
      plan("Hot Warm-policy.json", { policy: {} }).path,
      "/_plugins/_ism/policies/Hot%20Warm",
    );
  });

  it("sends a policy with phases and no states to Elasticsearch's ILM API", () => {
    const phases = { delete: { min_age: "30d", actions: { delete: {} } } };
    assert.deepEqual(plan("logs-policy.json", { policy: { phases } }), {
      kind: "policy",
      method: "PUT",
      path: "/_ilm/policy/logs",
      body: { policy: { phases } },
      name: "logs",
    });
    assert.deepEqual(plan("Old Logs-policy.json", { phases }).body, { policy: { phases } });
    assert.equal(plan("Old Logs-policy.json", { phases }).path, "/_ilm/policy/Old%20Logs");
    // Both, or neither: ISM's, as every policy file was before ILM; the cluster judges it.
    assert.equal(
      plan("p-policy.json", { policy: { phases, states: [] } }).path.slice(0, 9),
      "/_plugins",
    );
    assert.equal(plan("p-policy.json", { policy: {} }).path, "/_plugins/_ism/policies/p");
  });

  it("refuses a policy file without a policy", () => {
    rejects("p-policy.json", { settings: {} }, /without a "policy" object/);
    rejects("p-policy.json", { policy: [] }, /"policy" must be a JSON object/);
  });
});

describe("planRequest: indices", () => {
  it("creates an index named after the file, lowercased, one -index suffix removed", () => {
    const doc = { settings: { number_of_shards: 1 }, mappings: {} };
    assert.deepEqual(plan("r1/Users-index.json", doc), {
      kind: "index",
      method: "PUT",
      path: "/users",
      body: doc,
      name: "users",
    });
    assert.equal(plan("orders-index-index.json", { aliases: {} }).path, "/orders-index");
    assert.equal(plan("products.json", { mappings: {} }).path, "/products");
  });

  it("refuses invalid index names and unknown keys", () => {
    rejects("_private.json", { mappings: {} }, /not a valid index name/);
    rejects("a,b.json", { mappings: {} }, /not a valid index name/);
    rejects(`${"x".repeat(256)}.json`, { mappings: {} }, /not a valid index name/);
    rejects("a.json", { mappings: {}, settigns: {} }, /unknown key "settigns"/);
  });

  it("refuses a name that is only a suffix or a dot segment", () => {
    rejects("-index.json", { mappings: {} }, /derives the name ""/);
    rejects("..-template.json", { settings: {} }, /derives the name "\.\."/);
  });
});

describe("planRequest: malformed files", () => {
  it("names the line and column of a JSON syntax error", () => {
    rejects(
      "bad.json",
      '{\n  "settings": {}\n  "mappings": {}\n}',
      /not valid JSON: line 3, column 3/,
    );
    rejects("bad.json", "", /not valid JSON/);
    rejects("bad.json", '{"a":1,}', /not valid JSON: line 1/);
  });

  it("refuses bytes that are not UTF-8, but accepts a BOM", () => {
    assert.throws(
      () => planRequest("b.json", new Uint8Array([0x7b, 0xff, 0x7d])),
      /not valid UTF-8/,
    );
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes({ mappings: {} })]);
    assert.equal(planRequest("b.json", bom).kind, "index");
  });

  // Placeholders are replaced in a file's content only: `${prefix}bad-index.json` would create an
  // index literally named "${prefix}bad" (OpenSearch takes "$", "{" and "}").
  it("refuses a name derived from a file name that holds a ${placeholder}", () => {
    for (
      const [file, value] of [
        ["${prefix}bad-index.json", { settings: {} }],
        ["logs-${env}-template.json", { index_patterns: ["logs-*"] }],
        ["${p}hot-policy.json", { policy: {} }],
      ] as const
    ) {
      rejects(file, value, /names a placeholder in the file name, where none is replaced/);
    }
    // In the content, and in an envelope's own file name (which derives no name), it is fine.
    assert.equal(plan("${x}-call.json", { method: "GET", path: "/_cluster/health" }).method, "GET");
  });

  it("refuses documents that are not objects or match no rule", () => {
    rejects("a.json", [1, 2], /must hold a JSON object/);
    rejects("a.json", "null", /must hold a JSON object/);
    rejects("a.json", "42", /must hold a JSON object/);
    rejects("a.json", {}, /matches no rule/);
    rejects("a.json", { title: "x" }, /matches no rule/);
  });

  it("treats a __proto__ key as data, never as a prototype", () => {
    // Inherited keys must not make a file look like an envelope or an index.
    rejects("a.json", '{"__proto__": {"method": "DELETE", "path": "/x"}}', /matches no rule/);
    rejects("a.json", '{"__proto__": {"settings": {}}}', /matches no rule/);
    rejects("a.json", '{"__proto__": {}, "mappings": {}}', /unknown key "__proto__"/);
    const r = plan("a.json", '{"method": "PUT", "path": "/x", "body": {"__proto__": {"a": 1}}}');
    assert.deepEqual(Object.keys(r.body!), ["__proto__"]);
    assert.equal(Object.getPrototypeOf(r.body), Object.prototype);
  });
});

describe("planRequest: reindex files", () => {
  it("plans a -reindex.json as a run-once move of an alias to a new index", () => {
    const planned = plan("2/products-reindex.json", {
      alias: "products",
      index: "products-v2",
      settings: { number_of_shards: 1 },
      mappings: { properties: { price: { type: "double" } } },
      script: { source: "ctx._source.price = Double.parseDouble(ctx._source.price)" },
    });
    assert.deepEqual(planned, {
      kind: "reindex",
      method: "POST",
      path: "/_reindex",
      body: {
        settings: { number_of_shards: 1 },
        mappings: { properties: { price: { type: "double" } } },
      },
      name: "products-v2",
      runOnce: true,
      reindex: {
        alias: "products",
        index: "products-v2",
        script: { source: "ctx._source.price = Double.parseDouble(ctx._source.price)" },
        deleteSource: false,
        unblockSource: false,
      },
    });
    const minimal = plan("x-reindex.json", {
      alias: "a",
      index: "b",
      source: "c",
      delete_source: true,
    });
    assert.deepEqual(minimal.reindex, {
      alias: "a",
      index: "b",
      source: "c",
      deleteSource: true,
      unblockSource: false,
    });
    assert.deepEqual(minimal.body, {});
  });

  it("refuses, naming the key, what the cluster or the move cannot take", () => {
    const ok = { alias: "a", index: "b" };
    rejects("r-reindex.json", { index: "b" }, /needs "alias"/);
    rejects("r-reindex.json", { alias: "a" }, /needs "index": the name of the new index/);
    rejects(
      "r-reindex.json",
      { ...ok, index: "B" },
      /"index": "B" is not a valid name: it must be lower case/,
    );
    rejects("r-reindex.json", { ...ok, alias: "_x" }, /"alias": "_x" is not a valid name/);
    rejects("r-reindex.json", { alias: "a", index: "a" }, /"index" and "alias" are both "a"/);
    rejects("r-reindex.json", { ...ok, source: "b" }, /"source" is "b": it must be another index/);
    rejects("r-reindex.json", { ...ok, source: 1 }, /needs "source"/);
    rejects(
      "r-reindex.json",
      { ...ok, script: "ctx" },
      /"script" must be an object with a "source"/,
    );
    rejects("r-reindex.json", { ...ok, mappings: [] }, /"mappings" must be a JSON object/);
    rejects(
      "r-reindex.json",
      { ...ok, delete_source: "yes" },
      /"delete_source" must be true or false/,
    );
    rejects(
      "r-reindex.json",
      { ...ok, delete_source: true, unblock_source: true },
      /"delete_source" and "unblock_source" are both true: the source is deleted/,
    );
    rejects("r-reindex.json", { ...ok, aliases: {} }, /unknown key "aliases" for a reindex/);
    rejects(
      "r-reindex.json",
      '{"alias": "a", "index": "b", "__proto__": {"x": 1}}',
      /unknown key "__proto__"/,
    );
  });

  it("takes unblock_source and delete_source as booleans, at most one of them true", () => {
    const flag = fc.option(fc.boolean(), { nil: undefined });
    fc.assert(
      fc.property(flag, flag, (unblock, del) => {
        const file = {
          alias: "a",
          index: "b",
          ...(unblock === undefined ? {} : { unblock_source: unblock }),
          ...(del === undefined ? {} : { delete_source: del }),
        };
        if (unblock === true && del === true) {
          rejects("r-reindex.json", file, /both true/);
          return;
        }
        const spec = plan("r-reindex.json", file).reindex;
        assert.equal(spec?.unblockSource, unblock === true);
        assert.equal(spec?.deleteSource, del === true);
      }),
      propertyOptions(50),
    );
  });

  it("refuses any unblock_source that is not true or false, null included", () => {
    const notBoolean = fc.jsonValue({ stringUnit: "grapheme" }).filter((v) =>
      typeof v !== "boolean"
    );
    fc.assert(
      fc.property(notBoolean, (value) => {
        rejects(
          "r-reindex.json",
          { alias: "a", index: "b", unblock_source: value },
          /"unblock_source" must be true or false/,
        );
      }),
      propertyOptions(200),
    );
  });
});
