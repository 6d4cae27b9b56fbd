// The app's own client credentials in HTTP Basic (RFC 6749, 2.3.1): each part form-encoded first,
// so that any id and secret, with every byte value and any character, reach an authorization
// server that decodes them as Spring Authorization Server does (tests/security/loopback_port.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { clientAuthorization } from "../../src/security/client_authentication.ts";
import { basicClient } from "./loopback_port.ts";
import { propertyOptions } from "../property.ts";

describe("clientAuthorization", () => {
  it("form-encodes each part before HTTP Basic", () => {
    assert.equal(clientAuthorization("orders", "s3cret"), `Basic ${btoa("orders:s3cret")}`);
    assert.equal(
      clientAuthorization("orders api", "a:b+c%d&e"),
      `Basic ${btoa("orders+api:a%3Ab%2Bc%25d%26e")}`,
    );
  });

  it("carries every byte value of an id or a secret, the colon included", () => {
    for (let code = 0; code < 256; code++) {
      const c = String.fromCharCode(code);
      const header = clientAuthorization(`id${c}`, `${c}secret${c}`);
      assert.match(header, /^Basic [A-Za-z0-9+/]+=*$/, String(code));
      assert.deepEqual(
        basicClient(header),
        { id: `id${c}`, secret: `${c}secret${c}` },
        String(code),
      );
    }
  });

  it("round-trips any id and secret", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (id, secret) => {
        const header = clientAuthorization(id, secret);
        assert.match(header, /^Basic [A-Za-z0-9+/]*=*$/);
        assert.deepEqual(basicClient(header), { id, secret });
      }),
      propertyOptions(),
    );
  });
});
