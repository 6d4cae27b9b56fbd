import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { checkResponseHeaders, sendableResponse } from "../../src/http/response_headers.ts";
import { propertyOptions } from "../property.ts";

const FRAMING = [
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "trailer",
  "x-hono-already-sent",
];
// Every value `Headers` itself takes: one byte per character, no NUL, CR or LF.
const value = fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map(String.fromCharCode) })
  .filter((v) => !/[\0\r\n]/.test(v));
const name = fc.constantFrom("x-a", "location", "set-cookie", ...FRAMING);

describe("response headers (property)", () => {
  it("a value outside tab, space and visible ASCII throws naming the header; framing is dropped", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 5 }), (fields) => {
        const headers = new Headers();
        for (const [n, v] of fields) headers.append(n, v);
        // Copying normalises a combined value again (two empty values: ", " becomes ","): what
        // is checked is what the copy holds.
        const copy = new Headers(headers);
        const expected = [...copy];
        const bad = expected.find(([, v]) => /[^\t\x20-\x7e]/.test(v));
        if (bad !== undefined) {
          const namesBad = (error: unknown) =>
            error instanceof TypeError && error.message.includes(`"${bad[0]}"`) &&
            !error.message.includes(bad[1]);
          assert.throws(() => checkResponseHeaders(copy), namesBad);
          assert.throws(() => sendableResponse(new Response("x", { headers })), namesBad);
          return;
        }
        const framing = expected.some(([n]) => FRAMING.includes(n));
        assert.equal(checkResponseHeaders(copy), framing);
        assert.deepEqual([...copy], expected.filter(([n]) => !FRAMING.includes(n)));
        // Mutable headers are cleaned in place: the same response, its body untouched.
        const original = new Response("x", { headers });
        const before = [...original.headers];
        const sent = sendableResponse(original);
        assert.equal(sent, original);
        assert.deepEqual([...sent.headers], before.filter(([n]) => !FRAMING.includes(n)));
      }),
      propertyOptions(300),
    );
  });

  it("copies a response whose headers are immutable, status and body kept", async () => {
    const redirect = Response.redirect("http://x/a", 307);
    assert.equal(sendableResponse(redirect), redirect);
    class Immutable extends Headers {
      override delete(): never {
        throw new TypeError("immutable");
      }
    }
    const framed = new Response("body", { status: 202, statusText: "Later" });
    Object.defineProperty(framed, "headers", {
      value: new Immutable({ Connection: "close", "X-A": "1" }),
    });
    const sent = sendableResponse(framed);
    assert.notEqual(sent, framed);
    assert.equal(sent.headers.get("x-a"), "1");
    assert.equal(sent.status, 202);
    assert.equal(sent.statusText, "Later");
    assert.equal(sent.headers.has("connection"), false);
    assert.equal(await sent.text(), "body");
    // A value HTTP does not allow is refused all the same, named, and not quoted.
    const bad = new Response("body");
    Object.defineProperty(bad, "headers", {
      value: new Immutable({ Connection: "close", "X-B": "caf\u00e9" }),
    });
    assert.throws(
      () => sendableResponse(bad),
      (error: unknown) =>
        error instanceof TypeError && error.message.includes('"x-b"') &&
        !error.message.includes("caf"),
    );
  });
});

describe("sendableResponse: status", () => {
  it("refuses a status outside 200-599, which Node and Bun would send ahead of the answer", () => {
    for (const status of [100, 102, 103, 199, 600, 1000]) {
      const response = new Response("x");
      Object.defineProperty(response, "status", { value: status });
      assert.throws(() => sendableResponse(response), TypeError, String(status));
    }
    assert.equal(sendableResponse(new Response("x", { status: 299 })).status, 299);
  });

  it("sends a WebSocket upgrade's 101 as the runtime made it, its own headers kept", () => {
    // Deno's and workerd's upgrade answers: no Response constructor makes a 101 for a handler.
    const upgrade = new Response(null, {
      headers: { upgrade: "websocket", connection: "Upgrade" },
    });
    Object.defineProperty(upgrade, "status", { value: 101 });
    const sent = sendableResponse(upgrade);
    assert.equal(sent, upgrade);
    assert.equal(sent.headers.get("upgrade"), "websocket");
    assert.equal(sent.headers.get("connection"), "Upgrade");
  });
});
