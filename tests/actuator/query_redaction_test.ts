import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { REDACTED, redactQuery } from "../../src/actuator/query_redaction.ts";
import { propertyOptions } from "../property.ts";

// Names a query carries credentials under: signed URLs (S3, Azure, Google), API keys, OAuth.
const SECRET_NAMES = [
  "sig",
  "Signature",
  "X-Amz-Signature",
  "X-Amz-Credential",
  "X-Amz-Security-Token",
  "X-Goog-Signature",
  "AWSAccessKeyId",
  "token",
  "access_token",
  "refresh_token",
  "api_key",
  "apikey",
  "api-key",
  "password",
  "secret",
  "client_secret",
  "key",
  "code",
  "auth",
  "api%5Fkey",
  "pass+word",
];
const PLAIN_NAMES = ["page", "q", "sort", "id", "lang", "zipcode", "keyboard", "sigma", "mode"];

describe("redactQuery", () => {
  it("redacts the value of each secret-like parameter, keeping its name", () => {
    for (const name of SECRET_NAMES) {
      assert.equal(redactQuery(`page=2&${name}=s3cr%2Fet&q=a`), `page=2&${name}=${REDACTED}&q=a`);
    }
    for (const name of PLAIN_NAMES) {
      assert.equal(redactQuery(`${name}=visible`), `${name}=visible`);
    }
  });

  it("keeps what has no value, and a name it cannot decode as sent", () => {
    assert.equal(redactQuery("token&flag&=x&%E0%A4%A=1"), "token&flag&=x&%E0%A4%A=1");
    assert.equal(redactQuery("token="), `token=${REDACTED}`);
    assert.equal(redactQuery("sig=a=b=c"), `sig=${REDACTED}`);
  });

  it("keeps the shape and hides every secret value, whatever the query (property)", () => {
    const value = fc.string({ unit: "grapheme-ascii" }).map((s) => s.replace(/[&=]/g, ""));
    const parameter = fc.oneof(
      fc.record({ name: fc.constantFrom(...SECRET_NAMES), value, secret: fc.constant(true) }),
      fc.record({ name: fc.constantFrom(...PLAIN_NAMES), value, secret: fc.constant(false) }),
    );
    fc.assert(
      fc.property(fc.array(parameter, { maxLength: 8 }), (parameters) => {
        const query = parameters.map(({ name, value }) => `${name}=${value}`).join("&");
        const redacted = redactQuery(query);
        const out = redacted.split("&");
        assert.equal(out.length, Math.max(parameters.length, 1));
        parameters.forEach(({ name, value, secret }, i) => {
          assert.equal(out[i], `${name}=${secret ? REDACTED : value}`);
        });
        // Once is enough: a redacted query stays as it is.
        assert.equal(redactQuery(redacted), redacted);
      }),
      propertyOptions(),
    );
  });

  it("never throws, and keeps the count of parameters, for any text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (query) => {
        assert.equal(redactQuery(query).split("&").length, query.split("&").length);
      }),
      propertyOptions(),
    );
  });
});
