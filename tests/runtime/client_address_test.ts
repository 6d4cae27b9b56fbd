import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { propertyOptions } from "../property.ts";
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

  // Through Node's raw headers, which every runtime's clientAddress reads, so that a value no
  // `Headers` would take (a control character) still reaches the parser.
  const raw = (headers: [string, string][]) => ({
    incoming: { headers: {}, rawHeaders: headers.flat(), socket: { remoteAddress: "10.9.8.7" } },
  });
  const framework = (headers: [string, string][]) =>
    clientAddress(withHeaders({}), raw(headers), "framework");
  // What an answer taken from a header may be: an address, or RFC 7239's unknown or obfuscated
  // name, and text of that header.
  const fromHeader = (got: string | undefined, header: string) =>
    got !== undefined && /^(?:[\d.]+|[\da-fA-F:.]+|_[\w.-]+|unknown)$/.test(got) &&
    header.includes(got);

  it("with framework, reads Forwarded by RFC 7239's grammar: a quoted , ; = or \\\" is a value's", () => {
    const cases: [string, string][] = [
      // The proxy's element is the last; what the client sent before it cannot reach into it.
      ['for="1.2.3.4, for=5.6.7.8"', "10.9.8.7"],
      ['for="1.2.3.4, for=5.6.7.8", for=203.0.113.5', "203.0.113.5"],
      ['for="a;for=6.6.6.6", for=203.0.113.5', "203.0.113.5"],
      ['for=203.0.113.5;host="x, for=6.6.6.6"', "203.0.113.5"],
      ['for=203.0.113.5;host="x;for=6.6.6.6"', "203.0.113.5"],
      ['proto=http;host="x\\";for=6.6.6.6";for=203.0.113.5', "203.0.113.5"],
      ['for="[2001:db8::1]:4711"', "2001:db8::1"],
      ['for="[2001:DB8::1]"', "2001:DB8::1"],
      ["for=192.0.2.43:47011", "10.9.8.7"],
      ['for="192.0.2.43:47011"', "192.0.2.43"],
      ["for=_hidden", "_hidden"],
      ['for="_hidden:_port"', "_hidden"],
      ["for=unknown", "unknown"],
      ["FOR=192.0.2.1 ; proto=https , for=192.0.2.2", "192.0.2.2"],
      // An unbalanced quote, a control character, a for= twice in an element, a value that is
      // not a node: the header is broken, and names no one (nor lets X-Forwarded-For).
      ['for="6.6.6.6, for=203.0.113.5', "10.9.8.7"],
      ["for=203.0.113.5\n", "10.9.8.7"],
      ['for="203.0.113.5\r\nX-Evil: 1"', "10.9.8.7"],
      ["for=203.0.113.5;for=6.6.6.6", "10.9.8.7"],
      ["for=203.0.113.5 for=6.6.6.6", "10.9.8.7"],
      ['for="6.6.6.6\u0000"', "10.9.8.7"],
      ["for=evil.example", "10.9.8.7"],
      ["for=256.1.1.1", "10.9.8.7"],
      ["for=01.2.3.4", "10.9.8.7"],
      ['for="[fe80::1%25eth0]"', "10.9.8.7"],
      ['for="[1.2.3.4]"', "10.9.8.7"],
    ];
    for (const [forwarded, expected] of cases) {
      const headers: [string, string][] = [["Forwarded", forwarded], [
        "X-Forwarded-For",
        "6.6.6.6",
      ]];
      assert.equal(framework(headers), expected, forwarded);
    }
  });

  it("with framework, reads a Forwarded of a million spaces in one pass, not a split of them", () => {
    // Two optional runs of whitespace side by side were tried at every split of a long run: 50,000
    // spaces held the event loop for seconds, a million for hours. Nothing here times it: the
    // pass either ends or the run's time limit stops it.
    const spaces = " ".repeat(1_000_000);
    assert.equal(framework([["forwarded", `for=1.2.3.4,${spaces}x`]]), "10.9.8.7");
    assert.equal(framework([["forwarded", `for=203.0.113.5${spaces},${spaces}`]]), "203.0.113.5");
  });

  it("with framework, takes the last of several Forwarded fields, as if joined by a comma", () => {
    assert.equal(
      framework([["Forwarded", 'for="6.6.6.6'], ["forwarded", "for=203.0.113.5"]]),
      "10.9.8.7",
    );
    assert.equal(
      framework([["Forwarded", "for=6.6.6.6"], ["forwarded", "for=203.0.113.5"]]),
      "203.0.113.5",
    );
  });

  it("with framework, takes X-Forwarded-For's last entry only when it is an address", () => {
    const cases: [string, string][] = [
      ["6.6.6.6, 203.0.113.7", "203.0.113.7"],
      ["6.6.6.6,2001:db8::9", "2001:db8::9"],
      ["6.6.6.6, [2001:db8::9]:80", "2001:db8::9"],
      ["203.0.113.7:8080", "203.0.113.7"],
      ["6.6.6.6, evil\u001b[31m", "10.9.8.7"],
      ["6.6.6.6, 203.0.113.7 x", "10.9.8.7"],
      ["6.6.6.6,", "10.9.8.7"],
    ];
    for (const [xff, expected] of cases) {
      assert.equal(framework([["X-Forwarded-For", xff]]), expected, xff);
    }
  });

  it("with framework, names for any header the proxy's last for=, or no one", () => {
    // Any text before the proxy's element: the proxy's node, or (the header broken) the socket.
    const ipv4 = fc.tuple(...Array.from({ length: 4 }, () => fc.nat(255))).map((n) => n.join("."));
    const node = fc.oneof(
      ipv4.map((a) => [a, a]),
      ipv4.map((a) => [`"${a}:4711"`, a]),
      fc.ipV6().map((a) => [`"[${a}]"`, a]),
      fc.stringMatching(/^_[\w.-]{1,20}$/).map((a) => [a, a]),
    );
    const bytes = fc.string({ unit: fc.nat(255).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(bytes, node, (prefix, [written, address]) => {
        const got = framework([["Forwarded", `${prefix}, for=${written};proto=https`]]);
        assert.ok(got === address || got === "10.9.8.7", `${JSON.stringify(prefix)}: ${got}`);
      }),
      propertyOptions(),
    );
    // Any header at all: the socket's, or an address that is in it, with nothing unprintable.
    const header = fc.oneof(
      bytes,
      fc.array(
        fc.constantFrom("for=", '"', "\\", ",", ";", "=", " ", "[", "]", ":", "1.2.3.4", "_x"),
      )
        .map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(header, header, (forwarded, xff) => {
        const got = framework([["Forwarded", forwarded], ["X-Forwarded-For", xff]]);
        assert.ok(
          got === "10.9.8.7" || fromHeader(got, forwarded) || fromHeader(got, xff),
          `${JSON.stringify([forwarded, xff])}: ${got}`,
        );
      }),
      propertyOptions(),
    );
  });

  it("with framework, gives a safe answer for every byte, in Headers where the runtime takes it", () => {
    for (let c = 0; c < 256; c++) {
      const b = String.fromCharCode(c);
      for (const forwarded of [`for=${b}1.2.3.4`, `for="1.2.3.4${b}"`, `for=1.2.3.4${b}`, b]) {
        const got = framework([["Forwarded", forwarded]]);
        assert.ok(got === "10.9.8.7" || fromHeader(got, forwarded), `${c}: ${got}`);
        let request: Request;
        try {
          request = withHeaders({ forwarded });
        } catch {
          continue; // The runtime refuses the header: it never reaches the app.
        }
        const fromRequest = clientAddress(request, undefined, "framework");
        assert.ok(
          fromRequest === undefined || fromHeader(fromRequest, forwarded),
          `${c}: ${fromRequest}`,
        );
      }
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
