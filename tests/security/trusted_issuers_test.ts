// security.oauth2.resourceserver.jwt.issuers read and checked: each entry's shape, its own
// audiences over the shared ones, the shared settings in every entry, and an error naming the
// entry and the field for each thing that cannot be used.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_keys.ts";
import { trustedIssuers } from "../../src/security/trusted_issuers.ts";
import { propertyOptions } from "../property.ts";

const read = (jwt: Record<string, unknown>) =>
  trustedIssuers(readSettings(resolveConfig(
    { security: { oauth2: { resourceserver: { jwt } } } },
    () => undefined,
  )));

describe("trustedIssuers", () => {
  it("is undefined without the list", () => {
    assert.equal(read({}), undefined);
    assert.equal(read({ "issuer-uri": "https://a.example.com" }), undefined);
  });

  it("reads each entry in order, with the shared settings and its own audiences", () => {
    const issuers = read({
      "principal-claim-name": "email",
      "roles-claim-name": "roles",
      audiences: ["shared"],
      issuers: [
        { "issuer-uri": "https://a.example.com" },
        {
          issuer: "https://b.example.com",
          "jwk-set-uri": "https://keys.example.com/b",
          audiences: "orders",
        },
      ],
    });
    assert.equal(issuers?.length, 2);
    const [a, b] = issuers ?? [];
    assert.deepEqual(a.keys, { kind: "discovery", issuer: "https://a.example.com" });
    assert.equal(a.issuer, "https://a.example.com");
    assert.deepEqual(a.audiences, ["shared"]);
    assert.equal(a.principalClaim, "email");
    assert.equal(a.rolesClaim, "roles");
    assert.deepEqual(b.keys, { kind: "jwk-set", url: "https://keys.example.com/b" });
    assert.equal(b.issuer, "https://b.example.com");
    assert.deepEqual(b.audiences, ["orders"]);
    assert.equal(b.clockSkewMs, 60_000);
  });

  it("refuses what it cannot use, naming the entry and the field", () => {
    const refused: [unknown, RegExp][] = [
      [[], /issuers: give a list of issuers/],
      ["https://a.example.com", /issuers: give a list of issuers/],
      [["https://a.example.com"], /issuers\[0\]: give \{ issuer-uri \} or/],
      [[{ issuer: "https://a.example.com" }], /issuers\[0\]: give issuer-uri .*got issuer/],
      [[{ "jwk-set-uri": "https://a.example.com/k" }], /issuers\[0\]: give issuer-uri/],
      [[{}], /issuers\[0\]: give issuer-uri .*got nothing/],
      [
        [{ "issuer-uri": "https://a.example.com", "jwk-set-uri": "https://a.example.com/k" }],
        /issuers\[0\]: give issuer-uri/,
      ],
      [
        [{ "issuer-uri": "ftp://a.example.com" }],
        /issuers\[0\]\.issuer-uri: give an http\(s\) URL/,
      ],
      [[{ "issuer-uri": 7 }], /issuers\[0\]\.issuer-uri: give a URL, got 7/],
      [[{ "issuer-uri": "https://a", audince: ["x"] }], /issuers\[0\]: unknown key "audince"/],
      [[{ "issuer-uri": "https://a", audiences: [""] }], /issuers\[0\]\.audiences: give a list/],
      // Empty would check no audience at all, the shared ones dropped without a word.
      [
        [{ "issuer-uri": "https://a", audiences: [] }],
        /issuers\[0\]\.audiences: give one audience at least, or leave it out/,
      ],
      [
        [{ "issuer-uri": "https://a" }, { "issuer-uri": "https://b" }, {
          "issuer-uri": "https://a",
        }],
        /issuers\[2\]: the issuer "https:\/\/a" is listed at .*issuers\[0\] too/,
      ],
    ];
    for (const [issuers, said] of refused) {
      assert.throws(() => read({ issuers }), said, JSON.stringify(issuers));
    }
    assert.throws(
      () => read({ "jwk-set-uri": "https://k", issuers: [{ "issuer-uri": "https://a" }] }),
      /issuers and .*jwk-set-uri: give one/,
    );
    assert.throws(
      () => read({ "jws-algorithms": ["HS256"], issuers: [{ "issuer-uri": "https://a" }] }),
      /jws-algorithms: HS256 is refused/,
    );
  });

  it("gives one entry per distinct issuer listed, in order, whatever the URLs", () => {
    const url = fc.webUrl({ validSchemes: ["http", "https"] });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(url, fc.option(url, { nil: undefined })), {
          minLength: 1,
          maxLength: 6,
          selector: ([issuer]) => issuer,
        }),
        (entries) => {
          const issuers = read({
            issuers: entries.map(([issuer, keys]) =>
              keys === undefined ? { "issuer-uri": issuer } : { issuer, "jwk-set-uri": keys }
            ),
          });
          assert.deepEqual(issuers?.map((i) => i.issuer), entries.map(([issuer]) => issuer));
          for (const [i, [issuer, keys]] of entries.entries()) {
            assert.deepEqual(
              issuers?.[i].keys,
              keys === undefined ? { kind: "discovery", issuer } : { kind: "jwk-set", url: keys },
            );
          }
        },
      ),
      propertyOptions(),
    );
  });
});
