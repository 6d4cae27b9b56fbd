import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  INVALID_TARGET,
  REFUSED_PATHS,
  requestPath,
  requestPathAllowingEncodedSlash,
} from "../../src/web/request_path.ts";
import { removeDotSegments } from "../../src/web/path_pattern.ts";
import { propertyOptions } from "../property.ts";

// A request whose `url` is exactly what a server handed over, however malformed: `new Request`
// would normalise it, so the URL is given by a stand-in.
function handed(url: string, headers: Record<string, string> = {}): Request {
  return { url, headers: new Headers(headers) } as unknown as Request;
}

describe("requestPath", () => {
  it("is the decoded path with dot segments resolved, for a valid URL (property)", () => {
    const host = fc.constantFrom("x", "localhost:8080", "127.0.0.1:1", "[::1]:9", "a-b.example");
    const segment = fc.constantFrom("a", "b", ".", "..", "%20c", "d%2Fe", "");
    fc.assert(
      fc.property(host, fc.array(segment, { maxLength: 6 }), fc.boolean(), (h, parts, q) => {
        const path = "/" + parts.join("/");
        const url = `http://${h}${path}${q ? "?x=/y" : ""}`;
        assert.equal(
          requestPathAllowingEncodedSlash(handed(url)),
          removeDotSegments(decodeURI(path)), // decodeURI leaves %2F encoded, as routing must
          url,
        );
        const refusedSlash = REFUSED_PATHS.get(requestPath(handed(url)))?.includes("%2F");
        assert.equal(refusedSlash ?? false, path.includes("%2F"), url);
      }),
      propertyOptions(300),
    );
  });

  it("refuses encoded bytes that are no UTF-8, an encoded slash and encoded controls (property)", () => {
    const byte = fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0")}`);
    const piece = fc.oneof(
      fc.constantFrom("a", "%", "%zz", "é", "%C2%85", "%E2%80%A8", "%C3%A9"),
      byte,
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), fc.boolean(), (pieces, allowSlash) => {
        const path = "/p/" + pieces.join("");
        const target = `${path}?q=%ff`; // the query is no part of the check
        // The reference: each maximal run of %XX is refused, first for a slash (when not
        // allowed), then for bytes that are not UTF-8, then for a control character (C0, DEL,
        // C1, U+2028, U+2029) among the characters they decode to.
        let expected: string | undefined;
        for (const run of path.match(/(?:%[0-9a-fA-F]{2})+/g) ?? []) {
          const bytes = run.slice(1).split("%").map((h) => parseInt(h, 16));
          if (!allowSlash && bytes.includes(0x2f)) expected = "\u0000encoded-slash";
          else {
            try {
              const chars = new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
              const control = [...chars].some((c) => {
                const code = c.codePointAt(0)!;
                return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 ||
                  code === 0x2029;
              });
              if (control) expected = "\u0000encoded-control";
            } catch {
              expected = "\u0000not-utf8";
            }
          }
          if (expected !== undefined) break;
        }
        const read = allowSlash ? requestPathAllowingEncodedSlash : requestPath;
        for (const url of [`http://x${target}`, target]) {
          const got = read(handed(url));
          if (expected !== undefined) assert.equal(got, expected, url);
          else assert.ok(!REFUSED_PATHS.has(got) || got === INVALID_TARGET, `${url}: ${got}`);
        }
      }),
      propertyOptions(400),
    );
  });

  it("refuses a Host that moves the path (Deno pastes Host in as sent)", () => {
    for (
      const url of [
        "http://h?n=5&/q?n=1", // `Host: h?n=5&`
        "http://h/health#/anything", // `Host: h/health#`
        "http://a b/p", // `Host: a b`
        "http:///p", // `Host:` (empty)
        "http://x<script>/p",
        "http://x",
      ]
    ) {
      assert.equal(requestPath(handed(url)), INVALID_TARGET, url);
    }
  });

  it("reads a relative URL (Bun, no Host) as the path, and refuses one with a Host", () => {
    assert.equal(requestPath(handed("/zz/health?x=1")), "/zz/health");
    assert.equal(requestPath(handed("/a%20b/../c")), "/c");
    assert.equal(requestPath(handed("/zz/health", { host: "a b" })), INVALID_TARGET);
  });

  it("refuses a backslash, plain or encoded", () => {
    assert.equal(requestPath(handed("http://x/a\\..\\health")), INVALID_TARGET);
    assert.equal(requestPath(handed("http://x/a%5Cb")), INVALID_TARGET);
  });

  it("a Host without '/' never moves the path: Deno's URL is 'http://' + Host + target (property)", () => {
    const host = fc.array(fc.constantFrom("a", "1", ":", "@", "[", "]", "?", "#", " ", "%", "."), {
      maxLength: 6,
    }).map((p) => p.join(""));
    const target = fc.array(fc.constantFrom("a", "b", "x"), { minLength: 1, maxLength: 3 })
      .map((p) => "/" + p.join("/"));
    fc.assert(
      fc.property(host, target, (h, t) => {
        const routed = requestPath(handed(`http://${h}${t}?q=1`));
        assert.ok(
          routed === INVALID_TARGET || routed === t,
          `Host ${JSON.stringify(h)}: ${routed}`,
        );
      }),
      propertyOptions(1000),
    );
  });
});
