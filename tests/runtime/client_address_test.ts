import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientAddress, socketAddress } from "../../src/runtime/client_address.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";

const g = globalThis as { Deno?: unknown; Bun?: unknown };

// What the runtime the suite runs on hands the fetch beside a request, with `address` as its peer
// (on Node, the request's `headers` too, which Thaw reads there).
function hostOf(address: string, headers: Record<string, string> = {}): unknown {
  if (g.Deno !== undefined) return { remoteAddr: { transport: "tcp", hostname: address, port: 1 } };
  if (g.Bun !== undefined) return { requestIP: () => ({ address, family: "IPv4", port: 1 }) };
  const rawHeaders = Object.entries(headers).flat();
  return { incoming: { headers: {}, rawHeaders, socket: { remoteAddress: address } } };
}

const withHeaders = (headers: Record<string, string>) =>
  new Request("http://localhost/", { headers });

describe("socketAddress", () => {
  it("reads the peer from what this runtime hands the fetch", () => {
    assert.equal(socketAddress(withHeaders({}), hostOf("10.0.0.9")), "10.0.0.9");
  });

  it("knows none without a runtime's env, or from an edge runtime's bindings", () => {
    for (const env of [undefined, null, {}, { remoteAddr: "x" }, { incoming: {} }]) {
      assert.equal(socketAddress(withHeaders({}), env), undefined);
    }
    // A Unix socket has no address.
    if (g.Deno !== undefined) {
      assert.equal(
        socketAddress(withHeaders({}), { remoteAddr: { transport: "unix", path: "/s" } }),
        undefined,
      );
    }
  });
});

describe("clientAddress", () => {
  const spoofed = {
    "x-forwarded-for": "6.6.6.6, 203.0.113.7",
    "forwarded": 'for=6.6.6.6, for="[2001:db8::17]:4711";proto=https',
    "cf-connecting-ip": "198.51.100.1",
  };

  it("is the socket's with none, whatever the headers say", () => {
    assert.equal(
      clientAddress(withHeaders(spoofed), hostOf("127.0.0.1", spoofed), "none"),
      "127.0.0.1",
    );
    assert.equal(clientAddress(withHeaders(spoofed), undefined, "none"), undefined);
  });

  it("with framework, is the right-most Forwarded for=, else X-Forwarded-For entry", () => {
    const host = (headers: Record<string, string>) => hostOf("127.0.0.1", headers);
    assert.equal(clientAddress(withHeaders(spoofed), host(spoofed), "framework"), "2001:db8::17");
    const cases: [Record<string, string>, string][] = [
      [{ "x-forwarded-for": "6.6.6.6, 203.0.113.7" }, "203.0.113.7"],
      [{ "x-forwarded-for": "203.0.113.7" }, "203.0.113.7"],
      [{ forwarded: "for=192.0.2.60;proto=http;by=203.0.113.43" }, "192.0.2.60"],
      [{ forwarded: 'For="192.0.2.43:47011"' }, "192.0.2.43"],
      [{ forwarded: "for=_hidden, for=unknown" }, "unknown"],
      // No for= in the proxy's element: X-Forwarded-For, else the socket.
      [{ forwarded: "proto=https", "x-forwarded-for": "203.0.113.8" }, "203.0.113.8"],
      [{ forwarded: "for=6.6.6.6, by=10.0.0.1" }, "127.0.0.1"],
      [{ "x-forwarded-for": "" }, "127.0.0.1"],
      [{}, "127.0.0.1"],
    ];
    for (const [headers, expected] of cases) {
      assert.equal(clientAddress(withHeaders(headers), host(headers), "framework"), expected);
    }
  });

  it("with native, is the socket's, else (workerd) Cloudflare's CF-Connecting-IP", () => {
    assert.equal(
      clientAddress(withHeaders(spoofed), hostOf("127.0.0.1", spoofed), "native"),
      "127.0.0.1",
    );
    assert.equal(clientAddress(withHeaders(spoofed), {}, "native"), "198.51.100.1");
    assert.equal(clientAddress(withHeaders({}), {}, "native"), undefined);
  });

  it("reads Node's raw headers, each field of a name joined", () => {
    const env = {
      incoming: {
        headers: {},
        rawHeaders: ["X-Forwarded-For", "6.6.6.6", "x-forwarded-for", "203.0.113.9"],
        socket: { remoteAddress: "127.0.0.1" },
      },
    };
    assert.equal(clientAddress(withHeaders({}), env, "framework"), "203.0.113.9");
  });
});

describe("server.forward-headers-strategy", () => {
  it("is declared with the client address: none when unset, else Spring Boot's value", () => {
    const of = (server: Record<string, unknown>) =>
      readSettings(resolveConfig({ server }, () => undefined)).get(
        "server.forward-headers-strategy",
      );
    assert.equal(of({}), "none");
    for (const value of ["none", "native", "framework"]) {
      assert.equal(of({ "forward-headers-strategy": value }), value);
    }
    for (const value of ["NONE", "trust-all", 1, true, ["framework"]]) {
      assert.throws(
        () => of({ "forward-headers-strategy": value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^config: server\.forward-headers-strategy must be none or native or framework, got /
            .test(error.message),
      );
    }
  });
});
