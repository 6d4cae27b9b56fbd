// Which request paths a security.permit-all entry opens when no route takes the request, against a
// reference model that turns the entry into a regular expression.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { permitsPath } from "../../src/security/route_guard.ts";
import { propertyOptions } from "../property.ts";

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The model: `/**` any path under the prefix; `{x}` one segment, not empty; `{*x}` the rest. */
function model(pattern: string, path: string): boolean {
  if (pattern.endsWith("/**")) {
    return new RegExp(`^${escape(pattern.slice(0, -3))}(?:/.*)?$`, "s").test(path);
  }
  const source = pattern.slice(1).split("/").map((segment) =>
    segment.startsWith("{*")
      ? "(?:/.*)?"
      : segment.startsWith("{")
      ? "/[^/]+"
      : `/${escape(segment)}`
  ).join("");
  return new RegExp(`^${source}$`, "s").test(path);
}

const patternSegment = fc.constantFrom("a", "b", "a.b", "{id}", "{n:\\d+}");
const pathSegment = fc.constantFrom("a", "b", "a.b", "axb", "7", "");

describe("permitsPath", () => {
  it("agrees with the model on entries as security.permit-all takes them", () => {
    const entry = fc.tuple(
      fc.array(patternSegment, { maxLength: 4 }),
      fc.constantFrom("", "/**", "/{*rest}"),
    ).map(([segments, tail]) =>
      segments.length === 0 && tail === ""
        ? "/"
        : `/${segments.join("/")}${tail}`.replace("//", "/")
    );
    const path = fc.array(pathSegment, { maxLength: 6 }).map((s) => `/${s.join("/")}`);
    fc.assert(
      fc.property(entry, path, (pattern, p) => {
        assert.equal(permitsPath(pattern, p), model(pattern, p), `${pattern} ${p}`);
      }),
      propertyOptions(),
    );
  });

  it("opens a path, not its neighbours", () => {
    assert.equal(permitsPath("/public/**", "/public"), true);
    assert.equal(permitsPath("/public/**", "/public/"), true);
    assert.equal(permitsPath("/public/**", "/publicity"), false);
    assert.equal(permitsPath("/**", "/anything/at/all"), true);
    assert.equal(permitsPath("/", "/"), true);
    assert.equal(permitsPath("/", "/a"), false);
    assert.equal(permitsPath("/orders/{id}", "/orders/"), false);
    assert.equal(permitsPath("/orders/{id:\\d+}", "/orders/x"), true); // 404 or 405 either way
    assert.equal(permitsPath("/orders/{id}", "/orders"), false);
  });
});
