import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { joinPaths, parsePathPattern, removeDotSegments } from "../../src/web/path_pattern.ts";
import { propertyOptions } from "../property.ts";

// RFC 3986, 5.2.4, step by step as the RFC writes it: the model the function is held to. (Node
// 20's own URL parser is no oracle: it leaves `/a/.e/.` as it is.)
function rfc3986RemoveDotSegments(path: string): string {
  let input = path;
  let output = "";
  const popLast = () => (output = output.slice(0, Math.max(0, output.lastIndexOf("/"))));
  while (input.length > 0) {
    if (input.startsWith("../")) input = input.slice(3);
    else if (input.startsWith("./")) input = input.slice(2);
    else if (input.startsWith("/./")) input = "/" + input.slice(3);
    else if (input === "/.") input = "/";
    else if (input.startsWith("/../")) {
      input = "/" + input.slice(4);
      popLast();
    } else if (input === "/..") {
      input = "/";
      popLast();
    } else if (input === "." || input === "..") input = "";
    else {
      const segment = /^\/?[^/]*/.exec(input)![0];
      output += segment;
      input = input.slice(segment.length);
    }
  }
  return output;
}

describe("removeDotSegments", () => {
  it("resolves . and .. as RFC 3986 (5.2.4) does (property)", () => {
    const path = fc.array(fc.constantFrom("a", "b", ".", "..", "", "c.d", ".e"), { maxLength: 8 })
      .map((parts) => "/" + parts.join("/"));
    fc.assert(
      fc.property(path, (p) => {
        assert.equal(removeDotSegments(p), rfc3986RemoveDotSegments(p), p);
      }),
      propertyOptions(500),
    );
  });

  it("never climbs above the root", () => {
    assert.equal(removeDotSegments("/../../etc/passwd"), "/etc/passwd");
    assert.equal(removeDotSegments("/x/../health"), "/health");
    assert.equal(removeDotSegments("/x/.."), "/");
    assert.equal(removeDotSegments("/a/./b/"), "/a/b/");
  });
});

describe("parsePathPattern", () => {
  it("keeps every literal and names every variable (property)", () => {
    const segment = fc.oneof(
      fc.stringMatching(/^[a-z0-9_.~-]{1,6}$/).filter((s) => s !== "." && s !== ".."),
      fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/).map((name) => `{${name}}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(segment, { maxLength: 6 }), (parts) => {
        const source = "/" + parts.join("/");
        const pattern = parsePathPattern(source === "/" ? "/" : source);
        assert.equal(pattern.segments.length, parts.length);
        assert.deepEqual(
          pattern.variables,
          parts.filter((p) => p.startsWith("{")).map((p) => p.slice(1, -1)),
        );
        assert.equal(
          pattern.honoPath,
          "/" + parts.map((p) => p.startsWith("{") ? `:${p.slice(1, -1)}` : p).join("/"),
        );
      }),
      propertyOptions(300),
    );
  });

  it("joins a prefix and a path at one slash", () => {
    assert.equal(joinPaths("/api/", "/users"), "/api/users");
    assert.equal(joinPaths("api", "users/"), "/api/users");
    assert.equal(joinPaths("", ""), "/");
  });
});
