import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isAuthority } from "../../src/http/authority.ts";
import { propertyOptions } from "../property.ts";

const piece = fc.constantFrom(
  "a",
  "b",
  "1",
  ".",
  "-",
  ":",
  "@",
  "[",
  "]",
  "%",
  " ",
  "?",
  "#",
  "/",
  "::1",
  "99999",
  "80",
);
const text = fc.array(piece, { maxLength: 8 }).map((p) => p.join(""));

describe("isAuthority (property)", () => {
  it("what it accepts, the URL parser reads as that authority, with the path left alone", () => {
    fc.assert(
      fc.property(text, (authority) => {
        if (!isAuthority(authority)) return;
        const url = new URL(`http://${authority}/p?q`);
        assert.equal(url.pathname, "/p", authority);
        assert.equal(url.search, "?q", authority);
      }),
      propertyOptions(2000),
    );
  });

  it("refuses what would end the authority early or is no host character", () => {
    fc.assert(
      fc.property(
        text.filter((a) => !a.includes("@")),
        fc.constantFrom("/", "?", "#", " ", "\\", "<", "%2F"),
        (a, bad) => {
          assert.equal(isAuthority(`h${bad}${a}`), false, `h${bad}${a}`);
        },
      ),
      propertyOptions(500),
    );
  });

  it("takes hosts, IPv6 literals, ports and userinfo as servers see them", () => {
    for (
      const yes of [
        "localhost",
        "127.0.0.1:8080",
        "[::1]:9",
        "a.example",
        "u:p@h",
        "h:",
        "a.b.",
        "10.0.0.1.",
      ]
    ) {
      assert.ok(isAuthority(yes), yes);
    }
    for (
      const no of [
        "",
        "a:b:c",
        "[::1",
        "%2F",
        "localhost:abc",
        "evil:99999",
        "[]",
        "@",
        ".80",
        "1.2.3.256",
        "a.0x1",
      ]
    ) {
      assert.equal(isAuthority(no), false, no);
    }
  });
});
