// securityFailure finds a refused password or an untrusted certificate however deep the client's
// tries bury it, says nothing of other failures, ends on an error that holds itself, and never
// shows the password it may be handed with the client's options.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { securityFailure } from "../../src/kafka/security_failure.ts";
import { propertyOptions } from "../property.ts";

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

// Wraps `inner` as the client does, one layer per step: a cause, or one of an AggregateError's.
const buried = (inner: Error, layers: readonly { aggregate: boolean; others: number }[]) =>
  layers.reduce<Error>(
    (error, { aggregate, others }) =>
      aggregate
        ? new AggregateError(
          [...Array.from({ length: others }, () => coded("PLT_KFK_NETWORK")), error],
          "tries",
        )
        : new Error("Connection to 127.0.0.1:9096 failed.", { cause: error }),
    inner,
  );

const layers = fc.array(fc.record({ aggregate: fc.boolean(), others: fc.nat(3) }), {
  maxLength: 6,
});

describe("securityFailure", () => {
  it("names a refused password however deep, with the user but never the password", () => {
    fc.assert(
      fc.property(
        layers,
        fc.string({ unit: "binary" }),
        fc.string({ unit: "binary", minLength: 1 }),
        (steps, username, password) => {
          const client = { sasl: { mechanism: "SCRAM-SHA-256", username, password } };
          const why = securityFailure(buried(coded("PLT_KFK_AUTHENTICATION"), steps), client);
          // The whole text, made of the user's name alone: the password it was handed is not in it.
          assert.equal(
            why,
            `the broker refused the SASL credentials of ${
              JSON.stringify(username)
            } (SCRAM-SHA-256); see kafka.sasl.username and kafka.sasl.password`,
          );
        },
      ),
      propertyOptions(),
    );
  });

  it("names a broker certificate the client does not trust, with the platform's code", () => {
    fc.assert(
      fc.property(layers, (steps) => {
        const why = securityFailure(
          buried(
            coded("UNABLE_TO_VERIFY_LEAF_SIGNATURE", "unable to verify the first certificate"),
            steps,
          ),
          {},
        );
        assert.equal(
          why,
          "the broker's TLS certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE); " +
            "kafka.ssl.trust-store-certificates holds the certificates it is checked against",
        );
      }),
      propertyOptions(),
    );
  });

  it("says nothing of a failure the connection's security did not cause", () => {
    fc.assert(
      fc.property(
        layers,
        fc.constantFrom("PLT_KFK_NETWORK", "ECONNREFUSED", "ETIMEDOUT", "PLT_KFK_PROTOCOL", "X"),
        (steps, code) => {
          assert.equal(securityFailure(buried(coded(code), steps), {}), undefined);
        },
      ),
      propertyOptions(),
    );
    for (const value of [undefined, null, "PLT_KFK_AUTHENTICATION", 7, {}]) {
      assert.equal(securityFailure(value, {}), undefined);
    }
  });

  it("tells a certificate out of its dates and one for another host from an untrusted one", () => {
    assert.equal(
      securityFailure(buried(coded("CERT_HAS_EXPIRED"), [{ aggregate: true, others: 1 }]), {}),
      "the broker's TLS certificate is outside its validity dates (CERT_HAS_EXPIRED)",
    );
    assert.match(
      securityFailure(coded("ERR_TLS_CERT_ALTNAME_INVALID"), {}) ?? "",
      /^the broker's TLS certificate does not name the host the client reached/,
    );
  });

  it("tells a mechanism the broker does not take from refused credentials", () => {
    // As the client reports it: an authentication failure whose cause is the handshake's answer.
    const handshake = Object.assign(new Error("The broker does not support the mechanism."), {
      code: "PLT_KFK_PROTOCOL",
      apiId: "UNSUPPORTED_SASL_MECHANISM",
    });
    const refused = Object.assign(
      new Error("Cannot find a suitable SASL mechanism.", { cause: handshake }),
      { code: "PLT_KFK_AUTHENTICATION" },
    );
    assert.equal(
      securityFailure(buried(refused, [{ aggregate: true, others: 2 }]), {
        sasl: { mechanism: "PLAIN", username: "thaw" },
      }),
      "the broker does not take the SASL mechanism PLAIN on this listener; see " +
        "kafka.sasl.mechanism and kafka.security.protocol",
    );
  });

  it("answers undefined for an error it cannot read, and ends on one nested without end", () => {
    const throwing = Object.defineProperty(new Error("x"), "code", {
      get() {
        throw new Error("no code for you");
      },
    });
    const trap = new Proxy({}, {
      get() {
        throw new Error("trapped");
      },
    });
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const hostile of [throwing, trap, revoked, new AggregateError([trap])]) {
      assert.equal(securityFailure(hostile, {}), undefined);
    }
    let deep: Error = coded("PLT_KFK_NETWORK");
    for (let i = 0; i < 50_000; i++) deep = new Error("again", { cause: deep });
    assert.equal(securityFailure(deep, {}), undefined);
    const wide = new AggregateError(Array.from({ length: 100_000 }, () => coded("X")));
    assert.equal(securityFailure(wide, {}), undefined);
  });

  it("names the mechanism alone when the user comes from a provider, and ends on a cycle", () => {
    const refused = coded("PLT_KFK_AUTHENTICATION");
    const looped = new AggregateError([], "tries");
    Object.assign(looped, { errors: [looped, refused], cause: looped });
    assert.equal(
      securityFailure(looped, { sasl: { mechanism: "PLAIN", username: () => "orders" } }),
      "the broker refused the SASL credentials (PLAIN); see kafka.sasl.username and " +
        "kafka.sasl.password",
    );
    const circle = new Error("a");
    Object.assign(circle, { cause: circle });
    assert.equal(securityFailure(circle, {}), undefined);
  });
});
