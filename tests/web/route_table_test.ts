import { parsePathRegex } from "../../src/web/path_regex.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parsePathPattern } from "../../src/web/path_pattern.ts";
import { compareSpecificity, routeTable } from "../../src/web/route_table.ts";
import { propertyOptions } from "../property.ts";
import {
  expected,
  matches,
  METHODS,
  pathOf,
  probesArb,
  segmentArb,
  tableArb,
} from "./route_model.ts";

// Every path parsed as an app with regexes in its paths parses it.
const parsePattern = (source: string) => parsePathPattern(source, parsePathRegex);

const patternArb = fc.tuple(fc.array(segmentArb, { maxLength: 5 }), fc.boolean())
  .map(([s, rest]) => parsePattern(pathOf(s, rest)));

describe("route order (property)", () => {
  it("is a total order: antisymmetric, transitive, and equal only for one shape", () => {
    fc.assert(
      fc.property(patternArb, patternArb, patternArb, (a, b, c) => {
        assert.equal(Math.sign(compareSpecificity(a, b)) + Math.sign(compareSpecificity(b, a)), 0);
        if (compareSpecificity(a, b) <= 0 && compareSpecificity(b, c) <= 0) {
          assert.ok(compareSpecificity(a, c) <= 0, `${a.source} <= ${b.source} <= ${c.source}`);
        }
        assert.equal(compareSpecificity(a, b) === 0, a.shape === b.shape);
      }),
      propertyOptions(500),
    );
  });

  it("sorts a table to the same order whatever the declaration order", () => {
    fc.assert(
      fc.property(
        tableArb.chain((t) =>
          fc.tuple(fc.constant(t), fc.shuffledSubarray(t, { minLength: t.length }))
        ),
        ([table, shuffled]) => {
          const routes = (t: typeof table) =>
            t.map((r) => ({
              httpMethod: r.method,
              pattern: parsePattern(pathOf(r.segments, r.rest)),
            }));
          const order = (t: typeof table) =>
            routeTable(routes(t)).routes.map((r) => `${r.httpMethod} ${r.pattern.source}`)
              .filter((_, i, all) => all.indexOf(_) === i);
          assert.deepEqual(
            order(table).map((r) => r.split(" ")[1]),
            order(shuffled).map((r) => r.split(" ")[1]),
          );
        },
      ),
      propertyOptions(),
    );
  });

  it("the first route in table order that matches is the model's, and Allow is the model's", () => {
    fc.assert(
      fc.property(
        tableArb.chain((t) => fc.tuple(fc.constant(t), probesArb(t), fc.constantFrom(...METHODS))),
        ([table, probes, method]) => {
          const table_ = routeTable(table.map((r) => ({
            id: r.id,
            httpMethod: r.method,
            pattern: parsePattern(pathOf(r.segments, r.rest)),
            route: r,
          })));
          for (const path of probes) {
            const want = expected(table, method, path);
            const first = table_.routes.find((r) =>
              r.httpMethod === method && matches(r.route, path)
            );
            if (want.kind === "route") assert.equal(first?.id, want.id, `${method} ${path}`);
            else {
              assert.equal(first, undefined, `${method} ${path}`);
              // The table is given the path as routed: decoded (the probes encode no `/`).
              const allow = table_.allowed(decodeURI(path));
              assert.equal(
                allow,
                want.kind === "404" ? undefined : want.allow,
                `${method} ${path}`,
              );
            }
          }
        },
      ),
      propertyOptions(),
    );
  });
});

describe("route table", () => {
  it("lists Allow in a fixed order, with HEAD for GET and OPTIONS always", () => {
    const table = routeTable(
      (["DELETE", "GET", "POST"] as const).map((m) => ({
        httpMethod: m,
        pattern: parsePattern("/a/{id}"),
      })),
    );
    assert.equal(table.allowed("/a/1"), "GET, HEAD, POST, DELETE, OPTIONS");
    assert.equal(table.allowed("/a/"), undefined);
    assert.equal(table.allowed("/a"), undefined);
    assert.equal(table.allowed("a/1"), undefined);
  });

  it("orders kinds segment by segment, then prefixes, then regexes as text", () => {
    const sources = [
      "/a/{*rest}",
      "/a/{x}/b",
      "/a/{x:\\d+}",
      "/a/lit",
      "/a",
      "/a/{x:[ab]+}",
      "/a/{x}",
      "/{*rest}",
      "/",
      "/a/{x:\\d+}/{*rest}",
    ];
    const ordered = routeTable(
      sources.map((source) => ({ httpMethod: "GET" as const, pattern: parsePattern(source) })),
    ).routes.map((r) => r.pattern.source);
    assert.deepEqual(ordered, [
      "/",
      "/a",
      "/a/lit",
      "/a/{x:[ab]+}",
      "/a/{x:\\d+}",
      "/a/{x:\\d+}/{*rest}",
      "/a/{x}",
      "/a/{x}/b",
      "/a/{*rest}",
      "/{*rest}",
    ]);
  });

  it("lists the methods of the most specific path that matches, not of every path that does", () => {
    const table = routeTable(
      ([["GET", "/users/search"], ["PUT", "/users/{id}"], ["DELETE", "/users/{name}"], [
        "POST",
        "/users/{*rest}",
      ], ["PATCH", "/users/{id:\\d+}"]] as const).map(([m, p]) => ({
        httpMethod: m,
        pattern: parsePattern(p),
      })),
    );
    assert.equal(table.allowed("/users/search"), "GET, HEAD, OPTIONS");
    assert.equal(table.allowed("/users/7"), "PATCH, OPTIONS");
    assert.equal(table.allowed("/users/x"), "PUT, DELETE, OPTIONS");
    assert.equal(table.allowed("/users/x/y"), "POST, OPTIONS");
    assert.equal(table.allowed("/users"), "POST, OPTIONS");
  });

  it("decides among constraints by the whole pattern, not by the first segment's regex", () => {
    // `[ab]+` sorts after `a` as text, but the literal after it makes its pattern the more specific.
    const table = routeTable([
      { httpMethod: "GET" as const, pattern: parsePattern("/a/{x:[ab]+}/lit") },
      { httpMethod: "PUT" as const, pattern: parsePattern("/a/{x:a}/{v}") },
    ]);
    assert.equal(table.allowed("/a/a/lit"), "GET, HEAD, OPTIONS");
    assert.equal(table.allowed("/a/a/other"), "PUT, OPTIONS");
  });

  it("allows what a constraint or a catch-all matches, testing the decoded segment", () => {
    const table = routeTable([
      { httpMethod: "GET" as const, pattern: parsePattern("/n/{id:\\d+}") },
      { httpMethod: "PUT" as const, pattern: parsePattern("/n/{id:[a;]+}") },
      { httpMethod: "DELETE" as const, pattern: parsePattern("/f/{*path}") },
    ]);
    assert.equal(table.allowed("/n/7"), "GET, HEAD, OPTIONS");
    assert.equal(table.allowed("/n/x"), undefined);
    assert.equal(table.allowed("/n/a%3Ba"), "PUT, OPTIONS"); // as routed: `%3B` stays encoded
    assert.equal(table.allowed("/n/"), undefined);
    for (const path of ["/f", "/f/", "/f/a/b", "/f//"]) {
      assert.equal(table.allowed(path), "DELETE, OPTIONS", path);
    }
    assert.equal(table.allowed("/fx"), undefined);
  });
});
