import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_QUERY, REDACTED, redactQuery } from "../../src/actuator/query_redaction.ts";
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
  "jwt",
  "session",
  "sid",
  "JSESSIONID",
  "PHPSESSID",
  "id_token",
];
const PLAIN_NAMES = [
  "page",
  "q",
  "sort",
  "id",
  "lang",
  "zipcode",
  "keyboard",
  "sigma",
  "mode",
  "design",
  "sessions",
];

describe("redactQuery", () => {
  it("redacts the value of each secret-like parameter, keeping its name", () => {
    for (const name of SECRET_NAMES) {
      assert.equal(redactQuery(`page=2&${name}=s3cr%2Fet&q=a`), `page=2&${name}=${REDACTED}&q=a`);
    }
    for (const name of PLAIN_NAMES) {
      assert.equal(redactQuery(`${name}=visible`), `${name}=visible`);
    }
  });

  it("takes `;` as a separator too, as some servers do: no secret hides behind one", () => {
    assert.equal(redactQuery("page=2;token=s3cret"), `page=2;token=${REDACTED}`);
    assert.equal(redactQuery("a=1;sig=x&key=y;q=z"), `a=1;sig=${REDACTED}&key=${REDACTED};q=z`);
    // A `;` not followed by a parameter (`name=`) is part of the value: the secret after it too.
    assert.equal(redactQuery("token=ab;SECRET9&q=1"), `token=${REDACTED}&q=1`);
    assert.equal(redactQuery("token=a;b;c;d=1"), `token=${REDACTED};d=1`);
    // A name as the app reads it: `+` is a space, and spaces around it are not part of it.
    assert.equal(redactQuery("+key=S&key%20=S"), `+key=${REDACTED}&key%20=${REDACTED}`);
  });

  it("cuts a query longer than MAX_QUERY characters, with a marker, after redacting", () => {
    const long = `token=${"s".repeat(5000)}&q=${"a".repeat(5000)}`;
    const out = redactQuery(long);
    assert.ok(out.length <= MAX_QUERY + 20, `${out.length} characters`);
    assert.ok(out.startsWith(`token=${REDACTED}&q=aaa`), out.slice(0, 40));
    assert.match(out, /\[truncated\]$/);
    const cut = redactQuery(`q=${"a".repeat(MAX_QUERY)}&password=${"s".repeat(100)}`);
    assert.doesNotMatch(cut, /s{3}/);
    assert.equal(redactQuery("q=a".padEnd(MAX_QUERY, "a")), "q=a".padEnd(MAX_QUERY, "a"));
  });

  it("keeps what has no value, and a name it cannot decode as sent", () => {
    assert.equal(redactQuery("token&flag&=x&%E0%A4%A=1"), "token&flag&=x&%E0%A4%A=1");
    assert.equal(redactQuery("token="), `token=${REDACTED}`);
    assert.equal(redactQuery("sig=a=b=c"), `sig=${REDACTED}`);
  });

  it("hides a secret's value whole though it holds `;`s, whatever follows (property)", () => {
    const value = fc.string({ unit: "grapheme-ascii" }).map((s) => s.replace(/[&=]/g, ""));
    fc.assert(
      fc.property(fc.constantFrom(...SECRET_NAMES), value, value, (name, secret, rest) => {
        const query = `${name}=${secret}&q=${rest}`;
        assert.equal(redactQuery(query), `${name}=${REDACTED}&q=${rest}`);
      }),
      propertyOptions(),
    );
  });

  it("keeps the shape and hides every secret value, whatever the query (property)", () => {
    const value = fc.string({ unit: "grapheme-ascii" }).map((s) => s.replace(/[&;=]/g, ""));
    const parameter = fc.oneof(
      fc.record({ name: fc.constantFrom(...SECRET_NAMES), value, secret: fc.constant(true) }),
      fc.record({ name: fc.constantFrom(...PLAIN_NAMES), value, secret: fc.constant(false) }),
    );
    fc.assert(
      fc.property(fc.array(parameter, { maxLength: 8 }), (parameters) => {
        const separators = parameters.map((_, i) => (i % 3 === 2 ? ";" : "&"));
        const query = parameters.map(({ name, value }, i) =>
          `${i === 0 ? "" : separators[i]}${name}=${value}`
        ).join("");
        const redacted = redactQuery(query);
        const out = redacted.split(/[&;]/);
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

  it("never throws, and keeps every `&` and every text without `=`, for any text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (query) => {
        const out = redactQuery(query);
        assert.equal(out.split("&").length, query.split("&").length);
        if (!query.includes("=")) assert.equal(out, query);
      }),
      propertyOptions(),
    );
  });
});
