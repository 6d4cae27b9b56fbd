import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sendablePath } from "../../src/search/dot_segments.ts";
import { propertyOptions } from "../property.ts";

// The bean's connection sends what `new URL(origin + path)` makes of a path: what this gives must
// reach the server whole, every segment the client wrote in its place.
const pieces = fc.oneof(
  fc.constantFrom(".", "%2e", "%2E", "a", "_", "/", "\\", "%5C", "%2F", "#", "-"),
  // Any character a path may hold (the connection refuses the others before this): node:http
  // sends the path as given, so it must already be what a URL would write.
  fc.integer({ min: 0x21, max: 0xff }).map((code) => String.fromCharCode(code)),
);
const paths = fc.array(
  fc.array(pieces, { maxLength: 4 }).map((parts) => parts.join("")),
  { minLength: 1, maxLength: 5 },
).chain((segments) =>
  fc.option(
    fc.oneof(
      fc.constantFrom("?q=..", "?a=/../b", "?x=1#y", "?z=\\"),
      fc.array(pieces, { maxLength: 6 }).map((parts) => `?${parts.join("")}`),
    ),
    { nil: undefined },
  ).map(
    (query) => `/${segments.join("/")}${query ?? ""}`,
  )
);

describe("sendablePath", () => {
  it("refuses . and .. written with dots or %2e, in any segment, not in the query", () => {
    for (const path of ["/p/_doc/..", "/p/_doc/.", "/..", "/p/.%2E/x", "/p/%2e%2E", "/p/%2E"]) {
      assert.equal(sendablePath(path), undefined, path);
    }
    for (const path of ["/p/_doc/...", "/p/_doc/.a", "/p/a..b", "/p/_search?q=..", "/p/%252e"]) {
      assert.equal(sendablePath(path), path, path);
    }
  });

  it("writes what a URL would percent-encode as the URL writes it", () => {
    assert.equal(sendablePath("/p/_doc/a{b}"), "/p/_doc/a%7Bb%7D");
    assert.equal(sendablePath("/p/_doc/\u00e9"), "/p/_doc/%C3%A9");
    assert.equal(sendablePath("/p/_search?q='a'"), "/p/_search?q=%27a%27");
  });

  it("encodes a \\ and a #, which a URL reads as a / and as the end", () => {
    assert.equal(sendablePath("/p/_doc/..\\x"), "/p/_doc/..%5Cx");
    assert.equal(sendablePath("/p/_doc/a#b"), "/p/_doc/a%23b");
    assert.equal(sendablePath("/p/_search?q=a#b"), "/p/_search?q=a%23b");
  });

  it("property: what it gives comes out of the URL parser as it went in", () => {
    fc.assert(
      fc.property(paths, (path) => {
        const sent = sendablePath(path);
        if (sent === undefined) {
          // Refused only for a dot segment of the path part, never for the query.
          const end = path.indexOf("?");
          assert.match(end === -1 ? path : path.slice(0, end), /(^|\/)(\.|%2e){1,2}(\/|$)/i);
          return;
        }
        const url = new URL(`http://127.0.0.1:9200${sent}`);
        assert.equal(`${url.pathname}${url.search}`, sent);
        assert.equal(url.hash, "");
      }),
      propertyOptions(500),
    );
  });
});
