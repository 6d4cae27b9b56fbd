// security.oauth2.client.registration and provider read and checked: each registration's
// endpoint (its own token-uri, its provider's, or the provider's issuer), scopes as a list or as
// text, a number taken as its text, and errors naming the registration and the field.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_keys.ts";
import { clientRegistrations } from "../../src/security/client_registrations.ts";

const read = (client: Record<string, unknown>) =>
  clientRegistrations(readSettings(resolveConfig(
    { security: { oauth2: { client } } },
    () => undefined,
  )));

describe("clientRegistrations", () => {
  it("reads each registration's endpoint, scopes and credentials", () => {
    const [own, byProvider, byIssuer] = read({
      registration: {
        billing: {
          "client-id": 12345,
          "client-secret": "s",
          "token-uri": "https://id.example.com/t",
        },
        mail: { "client-id": "a", "client-secret": "s", scope: "send, read", provider: "corp" },
        stock: { "client-id": "a", "client-secret": "s", scope: ["x"] },
      },
      provider: {
        corp: { "token-uri": "https://corp.example.com/token" },
        stock: { "issuer-uri": "https://id.example.com" },
      },
    });
    assert.equal(own.clientId, "12345");
    assert.deepEqual(own.endpoint, { kind: "token-uri", url: "https://id.example.com/t" });
    assert.deepEqual(own.scopes, []);
    assert.deepEqual(byProvider.endpoint, {
      kind: "token-uri",
      url: "https://corp.example.com/token",
    });
    assert.deepEqual(byProvider.scopes, ["send", "read"]);
    assert.deepEqual(byIssuer.endpoint, { kind: "issuer", issuer: "https://id.example.com" });
    assert.deepEqual(read({}), []);
  });

  it("refuses what it cannot use, naming the registration and the field", () => {
    const base = { "client-id": "a", "client-secret": "s", "token-uri": "https://x.example.com" };
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ registration: "billing" }, /registration: give a mapping/],
      [{ registration: { billing: "x" } }, /billing: give a mapping of client-id/],
      [
        { registration: { billing: { ...base, "client-id": "" } } },
        /billing\.client-id: give the client id/,
      ],
      [{
        registration: { billing: { "client-id": "a", "client-secret": "s", provider: "p" } },
        provider: { p: {} },
      }, /provider\.p: give token-uri or issuer-uri/],
      [
        { registration: { billing: { "client-id": "a", "client-secret": "s" } } },
        /billing: give token-uri, or a provider \(.*provider\.billing\)/,
      ],
      [{ registration: { billing: { ...base, scope: "a b\u0000" } } }, /is not a scope/],
    ];
    for (const [client, said] of refused) {
      assert.throws(() => read(client), said, JSON.stringify(client));
    }
  });
});
