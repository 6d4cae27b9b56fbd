// The keys of the resource server: checked once their module is imported, typos refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/application_config.ts";
import { ASYMMETRIC_ALGORITHMS, SECURITY_KEYS } from "../../src/config/security_keys.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";

const jwt = (keys: Record<string, unknown>) =>
  resolveConfig({ security: { oauth2: { resourceserver: { jwt: keys } } } }, () => undefined);

describe("security.oauth2.resourceserver.jwt.* keys", () => {
  it("declares Spring Boot's names, and asymmetric algorithms by default", () => {
    const settings = readSettings(jwt({ "issuer-uri": "https://id.example.com" }));
    assert.equal(
      settings.get("security.oauth2.resourceserver.jwt.issuer-uri"),
      "https://id.example.com",
    );
    assert.deepEqual(
      settings.get("security.oauth2.resourceserver.jwt.jws-algorithms"),
      ASYMMETRIC_ALGORITHMS,
    );
    assert.equal(
      SECURITY_KEYS["security.oauth2.resourceserver.jwt.principal-claim-name"].default,
      "sub",
    );
    for (const alg of ASYMMETRIC_ALGORITHMS) assert.doesNotMatch(alg, /^(HS|none)/i);
  });

  it("refuses a misspelt key, naming the one it was meant as", () => {
    assert.throws(() => readSettings(jwt({ "issuer-url": "https://id.example.com" })), {
      message: "config: security.oauth2.resourceserver.jwt.issuer-url: unknown key; did you mean " +
        "security.oauth2.resourceserver.jwt.issuer-uri?",
    });
    assert.throws(
      () => readSettings(jwt({ audience: ["api"] })),
      /did you mean .*jwt\.audiences\?/,
    );
    assert.throws(
      () =>
        readSettings(
          resolveConfig({ security: { oauth2: { resourcesever: {} } } }, () => undefined),
        ),
      /security\.oauth2\.resourcesever: unknown key; did you mean security\.oauth2\.resourceserver\?/,
    );
  });

  it("leaves the app's own keys under security alone", () => {
    const settings = readSettings(
      resolveConfig(
        { security: { "admin-token": "t", cors: { origins: ["a"] } } },
        () => undefined,
      ),
    );
    assert.deepEqual(settings.get("security.oauth2.resourceserver.jwt.audiences"), []);
  });

  it("reads them from the environment", () => {
    const settings = readSettings(
      resolveConfig(
        {},
        (name) =>
          name === "SECURITY_OAUTH2_RESOURCESERVER_JWT_AUDIENCES" ? "orders,users" : undefined,
      ),
    );
    assert.deepEqual(settings.get("security.oauth2.resourceserver.jwt.audiences"), [
      "orders",
      "users",
    ]);
  });
});
