// The bearer token of an Authorization header, against RFC 6750's grammar as a reference.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bearerToken } from "../../src/security/bearer_token.ts";
import { propertyOptions } from "../property.ts";

const B64 = "ABCXYZabcxyz0189-._~+/";

describe("bearerToken", () => {
  it("reads RFC 6750's b64token after the Bearer scheme, in any case", () => {
    const b64token = fc.tuple(
      fc.string({ unit: fc.constantFrom(...B64), minLength: 1, maxLength: 20 }),
      fc.string({ unit: fc.constant("="), maxLength: 3 }),
    ).map(([body, pad]) => body + pad);
    const scheme = fc.constantFrom("Bearer", "bearer", "BEARER", "bEaReR");
    fc.assert(
      fc.property(scheme, b64token, (s, token) => {
        assert.deepEqual(bearerToken(`${s} ${token}`), { kind: "token", token });
      }),
      propertyOptions(),
    );
  });

  it("takes any other header for no token or an invalid request, never for a token", () => {
    const anyChar = fc.integer({ min: 0, max: 0x7F }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        fc.string({ unit: anyChar, maxLength: 16 }),
        fc.string({ unit: anyChar, maxLength: 16 }),
        (a, b) => {
          for (const header of [`${a}${b}`, `Bearer ${a}`, `Bearer ${a} ${b}`, `Bearer  ${a}`]) {
            const read = bearerToken(header);
            const bearer = /^bearer /i.test(header);
            const token = header.slice(7);
            const valid = bearer && /^[A-Za-z0-9\-._~+/]+=*$/.test(token);
            assert.deepEqual(
              read,
              valid
                ? { kind: "token", token }
                : bearer
                ? { kind: "invalid-request" }
                : { kind: "missing" },
              JSON.stringify(header),
            );
          }
        },
      ),
      propertyOptions(),
    );
    for (const header of [null, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc"]) {
      assert.notEqual(bearerToken(header).kind, "token", String(header));
    }
    for (
      const header of [
        "Bearer a=b",
        "Bearer a\\r\\nX: y",
        "Bearer a,b",
        "Bearer  abc",
        "Bearer abc ",
      ]
    ) {
      assert.deepEqual(bearerToken(header), { kind: "invalid-request" }, header);
    }
  });
});
