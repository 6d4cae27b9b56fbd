// Which pages may open a socket: the pure check of `Origin` against the request and the list.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { hostUrl, originAllowed, serializedOrigin } from "../../src/web/websocket_origin.ts";
import { propertyOptions } from "../property.ts";

// IDNA reserves a label with "--" in its third and fourth places (`xn--`: punycode); a URL
// parser refuses one that is no valid punycode, so no page has such a host.
const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/).filter((l) =>
  l.slice(2, 4) !== "--"
);
const host = fc.tuple(label, fc.constantFrom("com", "example", "test")).map(([l, t]) =>
  `${l}.${t}`
);
const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });
const authority = fc.tuple(host, port).map(([h, p]) => p === undefined ? h : `${h}:${p}`);
const scheme = fc.constantFrom("http", "https");

describe("originAllowed", () => {
  it("takes a client with no Origin, whatever the request", () => {
    fc.assert(
      fc.property(authority, (a) => originAllowed(null, `http://${a}/ws`, [])),
      propertyOptions(),
    );
  });

  it("takes a page of the request's own host, by either scheme", () => {
    fc.assert(
      fc.property(scheme, scheme, authority, (page, served, a) => {
        // A serialized origin drops its scheme's default port; either default is no other host.
        const origin = new URL(`${page}://${a}`).origin;
        const request = `${served}://${a}/ws`;
        return originAllowed(origin, request, []);
      }),
      propertyOptions(),
    );
  });

  it("takes a Host that names the default port a page's origin leaves out, no other", () => {
    const defaultPort = { http: 80, https: 443 } as const;
    fc.assert(
      fc.property(
        scheme,
        host,
        fc.oneof(fc.constantFrom(80, 443), fc.integer({ min: 1, max: 65535 })),
        (page, h, named) => {
          const origin = `${page}://${h}`;
          const at = hostUrl(new Request("http://x/", { headers: { host: `${h}:${named}` } }));
          return originAllowed(origin, at, []) === (named === defaultPort[page]);
        },
      ),
      propertyOptions(),
    );
  });

  it("does not take one scheme's default port for the other's", () => {
    const at = (host: string) => hostUrl(new Request("http://x/", { headers: { host } }));
    // A page served on the other scheme's default port is another origin of the same name.
    assert.equal(originAllowed("http://chat.example:443", at("chat.example"), []), false);
    assert.equal(originAllowed("https://chat.example:80", at("chat.example"), []), false);
    assert.equal(originAllowed("http://chat.example", at("chat.example:443"), []), false);
    assert.equal(originAllowed("https://chat.example", at("chat.example:80"), []), false);
    // Each named on both sides, or each scheme's own default: the same host and port.
    assert.equal(originAllowed("http://chat.example:443", at("chat.example:443"), []), true);
    assert.equal(originAllowed("https://chat.example:80", at("chat.example:80"), []), true);
    assert.equal(originAllowed("https://chat.example", at("chat.example:443"), []), true);
    assert.equal(originAllowed("http://chat.example", at("chat.example:80"), []), true);
    assert.equal(originAllowed("https://[::1]", at("[::1]:443"), []), true);
    assert.equal(originAllowed("http://[::1]:443", at("[::1]"), []), false);
    assert.equal(originAllowed("HTTPS://Chat.Example", at("CHAT.example:443"), []), true);
    assert.equal(originAllowed("https://chat.example", at("chat.example.:443"), []), false);
  });

  it("refuses an empty Origin, which no browser sends", () => {
    assert.equal(originAllowed("", "http://chat.example/ws", []), false);
    assert.equal(originAllowed("", "http://chat.example/ws", ["https://chat.example"]), false);
  });

  it("refuses a page of another host unless the list names its origin exactly, or is *", () => {
    fc.assert(
      fc.property(scheme, authority, authority, (s, page, served) => {
        // Another host: `aa.com:443` and `aa.com` are one (a page's default port left out).
        fc.pre(page.split(":")[0] !== served.split(":")[0]);
        // As a browser sends it: without its scheme's default port.
        const origin = new URL(`${s}://${page}`).origin;
        const request = `http://${served}/ws`;
        const other = s === "http" ? "https" : "http";
        return !originAllowed(origin, request, []) &&
          originAllowed(origin, request, [origin]) &&
          !originAllowed(origin, request, [`${other}://${page}`]) &&
          originAllowed(origin, request, ["*"]);
      }),
      propertyOptions(),
    );
  });

  it("refuses what no browser sends as an origin, and null unless listed", () => {
    const request = "http://chat.example/ws";
    for (
      const origin of [
        "",
        "chat.example",
        "http://chat.example/path",
        "http://user@chat.example",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://chat.example:80x",
        "null",
      ]
    ) {
      assert.equal(originAllowed(origin, request, []), false, JSON.stringify(origin));
    }
    assert.equal(originAllowed("null", request, ["null"]), true);
    assert.equal(originAllowed("HTTP://Chat.Example", request, []), true);
  });

  it("refuses every byte a client may put around a host", () => {
    for (let byte = 0; byte < 256; byte++) {
      const c = String.fromCharCode(byte);
      const origin = `http://chat.example${c}evil.test`;
      const allowed = originAllowed(origin, "http://chat.example/ws", []);
      // Only what a URL reads as part of this very host can pass: nothing that makes it another.
      if (allowed) assert.equal(new URL(origin).host, "chat.example", `byte ${byte}`);
    }
  });
});

describe("hostUrl", () => {
  it("reads the host from the Host header, not from the request's URL; none without one", () => {
    const absolute = new Request("http://evil.example/ws", { headers: { host: "chat.example" } });
    assert.equal(hostUrl(absolute), "http://chat.example/");
    assert.equal(originAllowed("https://evil.example", hostUrl(absolute), []), false);
    assert.equal(originAllowed("https://chat.example", hostUrl(absolute), []), true);
    const hostless = new Request("http://localhost/ws");
    assert.equal(hostUrl(hostless), undefined);
    assert.equal(originAllowed("http://localhost", hostUrl(hostless), []), false);
    assert.equal(originAllowed("http://localhost", undefined, ["http://localhost"]), true);
    assert.equal(originAllowed("http://chat.example", "http://a b/", []), false);
  });
});

describe("serializedOrigin", () => {
  it("gives the origin as a browser writes it, or undefined", () => {
    assert.equal(serializedOrigin("https://App.Example.com"), "https://app.example.com");
    assert.equal(serializedOrigin("https://app.example.com/"), "https://app.example.com");
    assert.equal(serializedOrigin("http://app.example.com:8080"), "http://app.example.com:8080");
    assert.equal(serializedOrigin("https://app.example.com:443"), undefined);
    assert.equal(serializedOrigin("https://app.example.com/x"), undefined);
    assert.equal(serializedOrigin("null"), "null");
    assert.equal(serializedOrigin("app.example.com"), undefined);
  });
});
