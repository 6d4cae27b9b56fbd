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
        const expected = [...headers];
        const bad = expected.find(([, v]) => /[^\t\x20-\x7e]/.test(v));
        const copy = new Headers(headers);
        if (bad !== undefined) {
          assert.throws(
            () => checkResponseHeaders(copy),
            (error: unknown) =>
              error instanceof TypeError && error.message.includes(`"${bad[0]}"`) &&
              !error.message.includes(bad[1]),
          );
          assert.throws(() => sendableResponse(new Response("x", { headers })), TypeError);
          return;
        }
        const framing = expected.some(([n]) => FRAMING.includes(n));
        assert.equal(checkResponseHeaders(copy), framing);
        assert.deepEqual([...copy], expected.filter(([n]) => !FRAMING.includes(n)));
        const original = new Response("x", { headers });
        const sent = sendableResponse(original);
        assert.equal(sent === original, !framing);
        assert.deepEqual(
          [...sent.headers].filter(([n]) => n !== "content-type"),
          expected.filter(([n]) => !FRAMING.includes(n) && n !== "content-type"),
        );
      }),
      propertyOptions(300),
    );
  });

  it("copies an immutable response's status and body when it drops framing headers", async () => {
    const redirect = Response.redirect("http://x/a", 307);
    assert.equal(sendableResponse(redirect), redirect);
    const framed = new Response("body", {
      status: 202,
      statusText: "Later",
      headers: { Connection: "close" },
    });
    const sent = sendableResponse(framed);
    assert.equal(sent.status, 202);
    assert.equal(sent.statusText, "Later");
    assert.equal(sent.headers.has("connection"), false);
    assert.equal(await sent.text(), "body");
  });
});
