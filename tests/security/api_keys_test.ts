// API keys: read from configuration (checked, masked), compared as digests, hostile headers refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { configSecrets, resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_scheme_keys.ts";
import { ApiKeyAuthenticator, apiKeySettings } from "../../src/security/api_keys.ts";
import { propertyOptions } from "../property.ts";

const BATCH = "k-batch-0123456789abcdef";
const REPORTS = "k-reports-0123456789abcdef";
const config = (apiKeys: unknown) =>
  resolveConfig({ security: { "api-keys": apiKeys } }, () => undefined);
const read = (apiKeys: unknown) => apiKeySettings(readSettings(config(apiKeys)));

async function authenticator(): Promise<ApiKeyAuthenticator> {
  const settings = read({
    "header-name": "X-Service-Key",
    keys: {
      batch: { key: BATCH, authorities: ["ROLE_BATCH"] },
      reports: { key: REPORTS, authorities: "reports:read" },
    },
  });
  assert.ok(settings !== undefined);
  return await ApiKeyAuthenticator.create(settings);
}

describe("API keys", () => {
  it("lets in each configured key as its name, with its authorities", async () => {
    const keys = await authenticator();
    assert.equal(keys.header, "x-service-key");
    assert.deepEqual(await keys.authenticate(BATCH), {
      kind: "authenticated",
      authentication: { scheme: "api-key", name: "batch", authorities: ["ROLE_BATCH"] },
    });
    assert.deepEqual(await keys.authenticate(REPORTS), {
      kind: "authenticated",
      authentication: { scheme: "api-key", name: "reports", authorities: ["reports:read"] },
    });
  });

  it("refuses what is not a key: a near one, a prefix, a longer one, hostile bytes, 1 MB", async () => {
    const keys = await authenticator();
    const reason = async (value: string | null) => {
      const result = await keys.authenticate(value);
      return result.kind === "refused" ? result.reason : result.kind;
    };
    assert.equal(await reason(BATCH.slice(0, -1)), "unknown-key");
    assert.equal(await reason(`${BATCH}x`), "unknown-key");
    assert.equal(await reason(BATCH.toUpperCase()), "unknown-key");
    assert.equal(await reason("batch"), "unknown-key");
    assert.equal(await reason(null), "missing");
    assert.equal(await reason(""), "missing");
    assert.equal(await reason(`${BATCH} `), "malformed");
    assert.equal(await reason("x".repeat(1_000_000)), "malformed");
    for (let byte = 0; byte < 256; byte++) {
      const c = String.fromCharCode(byte);
      const expected = byte > 0x20 && byte < 0x7F ? "unknown-key" : "malformed";
      assert.equal(await reason(`${BATCH}${c}`), expected, String(byte));
      assert.equal(await reason(`${c}${BATCH}`), expected, String(byte));
    }
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 40 }), async (value) => {
        const result = await keys.authenticate(value);
        assert.ok(
          value === ""
            ? result.kind === "missing"
            : value === BATCH || value === REPORTS
            ? result.kind === "authenticated"
            : result.kind === "refused",
        );
      }),
      propertyOptions(),
    );
  });

  it("refuses a wrong configuration naming the key, never showing the secret", () => {
    assert.equal(read({}), undefined);
    assert.equal(read({ keys: {} }), undefined);
    const refused = (apiKeys: unknown, pattern: RegExp) =>
      assert.throws(() => read(apiKeys), (error: Error) => {
        assert.match(error.message, pattern);
        assert.doesNotMatch(error.message, /k-batch|short-one/);
        return true;
      });
    refused(
      { keys: { batch: { key: "short-one" } } },
      /keys\.batch\.key: give a key of at least 16/,
    );
    refused({ keys: { batch: { key: `${BATCH} x` } } }, /printable ASCII/);
    refused(
      { keys: { batch: { key: BATCH, roles: ["x"] } } },
      /unknown key "roles"; the keys are key, authorities/,
    );
    refused(
      { keys: { batch: { key: BATCH, authorities: [1] } } },
      /batch\.authorities: give a list/,
    );
    refused(
      { keys: { a: { key: BATCH }, b: { key: BATCH } } },
      /keys\.b\.key: the same key as .*keys\.a/,
    );
    refused({ keys: [BATCH] }, /give a mapping of each key's name/);
    refused(
      { "header-name": "X Key", keys: { a: { key: BATCH } } },
      /header-name: not a header name/,
    );
  });

  it("checks the keys under security.api-keys and security.basic, and leaves the rest of security alone", () => {
    assert.throws(() => readSettings(config({ "header-nme": "X-Key" })), {
      message:
        "config: security.api-keys.header-nme: unknown key; did you mean security.api-keys.header-name?",
    });
    assert.throws(
      () => readSettings(resolveConfig({ security: { basic: { relm: "x" } } }, () => undefined)),
      /security\.basic\.relm: unknown key; did you mean security\.basic\.realm\?/,
    );
    const settings = readSettings(
      resolveConfig(
        { security: { "admin-token": "t", cors: { origins: ["a"] } } },
        () => undefined,
      ),
    );
    assert.equal(settings.get("security.api-keys.header-name"), "X-API-Key");
    assert.equal(settings.get("security.basic.realm"), "Realm");
  });

  it("counts every configured key among the secrets no message shows", () => {
    const secrets = configSecrets(
      config({ keys: { batch: { key: BATCH, authorities: ["ROLE_BATCH"] } } }),
    );
    assert.ok(secrets.includes(BATCH));
  });
});
