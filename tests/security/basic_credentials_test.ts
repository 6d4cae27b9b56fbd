// The credentials of a Basic header, against RFC 7617's grammar as a reference, and hostile bytes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  basicChallenge,
  basicCredentials,
  MAX_BASIC_HEADER_LENGTH,
} from "../../src/security/basic_credentials.ts";
import { toBase64 } from "../../src/security/password_hash.ts";
import { propertyOptions } from "../property.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);
const basic = (bytes: Uint8Array) => `Basic ${toBase64(bytes)}`;
// A user-id (no `:`, no control) and a password (no control), any Unicode else.
// deno-lint-ignore no-control-regex -- the control characters are what RFC 7617 refuses
const CONTROL = /[\x00-\x1F\x7F]/;
const noControl = fc.string({ unit: "grapheme", maxLength: 20 }).filter((s) => !CONTROL.test(s));
const userId = noControl.filter((s) => s !== "" && !s.includes(":"));

describe("basicCredentials", () => {
  it("reads any user-id without ':' and any password, in UTF-8, the scheme in any case (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("Basic ", "basic ", "BASIC  ", "bAsIc "),
        userId,
        noControl,
        (scheme, username, password) => {
          const header = `${scheme}${toBase64(utf8(`${username}:${password}`))}`;
          assert.deepEqual(basicCredentials(header), { kind: "credentials", username, password });
        },
      ),
      propertyOptions(),
    );
  });

  it("never throws, and reads credentials only from what the grammar allows (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 48 }), fc.string({ maxLength: 24 }), (bytes, text) => {
        const read = basicCredentials(basic(bytes));
        let decoded: string | undefined;
        try {
          decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
        } catch {
          decoded = undefined;
        }
        const valid = decoded !== undefined && decoded.indexOf(":") > 0 &&
          !CONTROL.test(decoded);
        if (valid) {
          const colon = decoded!.indexOf(":");
          assert.deepEqual(read, {
            kind: "credentials",
            username: decoded!.slice(0, colon),
            password: decoded!.slice(colon + 1),
          });
        } else {
          assert.deepEqual(read, { kind: "malformed" });
        }
        // Any text after the scheme: never an exception, and credentials only of canonical base64.
        const other = basicCredentials(`Basic ${text}`);
        if (other.kind === "credentials") {
          assert.equal(toBase64(utf8(`${other.username}:${other.password}`)), text);
        }
      }),
      propertyOptions(),
    );
  });

  it("takes every byte value of a header for malformed or missing, never for an exception", () => {
    for (let byte = 0; byte < 256; byte++) {
      const c = String.fromCharCode(byte);
      for (
        const header of [
          `Basic ${c}`,
          `Basic ${toBase64(utf8("ada:pw"))}${c}`,
          `Basic${c}${toBase64(utf8("ada:pw"))}`,
          `Basic ${toBase64(new Uint8Array([0x61, byte, 0x3A, 0x62]))}`,
          `Basic ${toBase64(new Uint8Array([0x61, 0x3A, byte]))}`,
        ]
      ) {
        const read = basicCredentials(header);
        if (read.kind === "credentials") {
          // Only a printable byte, or a UTF-8 sequence that is whole, gives credentials.
          assert.ok(
            byte >= 0x20 && byte !== 0x7F && byte < 0x80,
            `${byte}: ${JSON.stringify(read)}`,
          );
        }
      }
    }
    assert.deepEqual(basicCredentials(`Basic ${toBase64(utf8("a\u0000:b"))}`), {
      kind: "malformed",
    });
    assert.deepEqual(basicCredentials(`Basic ${toBase64(utf8("a:b\r\nX-Admin: 1"))}`), {
      kind: "malformed",
    });
    assert.deepEqual(basicCredentials(`Basic ${toBase64(new Uint8Array([0x61, 0x3A, 0xC3]))}`), {
      kind: "malformed",
    });
    assert.deepEqual(basicCredentials(`Basic ${toBase64(new Uint8Array([0xFF, 0x3A, 0x61]))}`), {
      kind: "malformed",
    });
  });

  it("places ':' as RFC 7617 says: the first ends the user-id, the password may hold more", () => {
    const read = (text: string) => basicCredentials(basic(utf8(text)));
    assert.deepEqual(read(":pw"), { kind: "malformed" });
    assert.deepEqual(read("ada"), { kind: "malformed" });
    assert.deepEqual(read("ada:"), { kind: "credentials", username: "ada", password: "" });
    assert.deepEqual(read("ada::"), { kind: "credentials", username: "ada", password: ":" });
    assert.deepEqual(read("a:b:c"), { kind: "credentials", username: "a", password: "b:c" });
    assert.deepEqual(read("ä☃:🔑"), { kind: "credentials", username: "ä☃", password: "🔑" });
  });

  it("refuses non-canonical base64, an empty token and a header of 1 MB unread", () => {
    // Padded, and holding a `+`: the padding cut and the base64url alphabet are refused.
    const token = toBase64(utf8("ada:>>>"));
    assert.equal(token, "YWRhOj4+Pg==");
    for (
      const header of [
        "Basic",
        "Basic ",
        `Basic ${token.replace(/=+$/, "")}`,
        `Basic  ${token} `,
        `Basic ${token.slice(0, 4)} ${token.slice(4)}`,
        `Basic ${toBase64(utf8("ada:p"))}`.replace("A=", "B="),
        `Basic ${token.replaceAll("+", "-")}`,
        `Basic ${"A".repeat(1_000_000)}`,
        `Basic ${toBase64(utf8(`ada:${"x".repeat(MAX_BASIC_HEADER_LENGTH)}`))}`,
      ]
    ) {
      assert.deepEqual(basicCredentials(header), { kind: "malformed" }, header.slice(0, 40));
    }
    for (
      const header of [null, "", "Bearer abc", "Basicabc", "Digest username=ada", " Basic abc"]
    ) {
      assert.deepEqual(basicCredentials(header), { kind: "missing" }, String(header));
    }
  });

  it("challenges with the realm made safe for a header", () => {
    assert.equal(basicChallenge("Realm"), 'Basic realm="Realm", charset="UTF-8"');
    assert.equal(basicChallenge('a"\\\r\nb\u00e9'), 'Basic realm="a\\"\\\\b", charset="UTF-8"');
  });
});
