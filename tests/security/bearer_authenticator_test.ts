// security({ validators }) and the caller a verified token makes: each validator in order, a text
// refusing the token with it, and a validator that cannot answer (it throws, answers a promise or
// anything else) refusing it too; the description reaches the client's header made safe, the log
// line shown escaped, whatever bytes the app's text or the token's claims hold.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bootstrap } from "../../mod.ts";
import { security, testTokens, type TokenValidator } from "../../security.ts";
import { callerOf, runValidators } from "../../src/security/bearer_authenticator.ts";
import { TokenFailure } from "../../src/security/token_failure.ts";
import { memoryLogger } from "../helpers.ts";
import { propertyOptions } from "../property.ts";

const MAPPING = { principalClaim: "sub", authorityPrefix: "SCOPE_" } as const;

function failureOf(run: () => unknown): TokenFailure {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof TokenFailure, String(error));
    return error;
  }
  assert.fail("the token was let through");
}

describe("runValidators", () => {
  it("runs each in order and stops at the first that refuses", () => {
    const ran: number[] = [];
    const validators: TokenValidator[] = [0, 1, 2].map((i) => (claims) => {
      ran.push(i);
      return claims.bad === i ? `refused by ${i}` : undefined;
    });
    runValidators(validators, { bad: -1 });
    assert.deepEqual(ran, [0, 1, 2]);
    ran.length = 0;
    const failure = failureOf(() => runValidators(validators, { bad: 1 }));
    assert.deepEqual(ran, [0, 1]);
    assert.equal(failure.reason, "validator");
    assert.equal(failure.description, "refused by 1");
    assert.equal(
      failure.message,
      'bearer token refused (validator): validator 1 of security({ validators }): "refused by 1"',
    );
  });

  it("refuses when a validator throws or answers anything but a text or undefined", () => {
    const answers: [unknown, RegExp][] = [
      [Promise.resolve(undefined), /answered a promise/],
      [null, /answered object/],
      [false, /answered boolean/],
      [0, /answered number/],
      [{ reason: "x" }, /answered object/],
    ];
    for (const [answer, said] of answers) {
      const failure = failureOf(() => runValidators([() => answer as string], {}));
      assert.equal(failure.reason, "validator");
      assert.equal(failure.description, undefined);
      assert.match(failure.message, said);
      assert.match(failure.message, /validator 0 of security\(\{ validators \}\) could not answer/);
    }
    const thrown = failureOf(() =>
      runValidators([() => undefined, () => {
        throw new Error("no tenant table\r\nforged line");
      }], {})
    );
    assert.match(
      thrown.message,
      /validator 1 .*could not answer: no tenant table\\u000d\\u000aforged line/,
    );
    assert.ok(!/[\r\n]/.test(thrown.message));
  });

  it("writes any text a validator answers into the log line on one line", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
        const failure = failureOf(() => runValidators([() => text], {}));
        assert.equal(failure.description, text);
        // deno-lint-ignore no-control-regex
        assert.ok(!/[\x00-\x1F\x7F\u2028\u2029]/.test(failure.message), failure.message);
      }),
      propertyOptions(),
    );
  });
});

describe("callerOf", () => {
  it("runs the validators before it reads the caller's name", () => {
    const failure = failureOf(() =>
      callerOf({ sub: "" }, MAPPING, [() => "the app's own refusal"])
    );
    assert.equal(failure.reason, "validator");
    assert.equal(failureOf(() => callerOf({ sub: "" }, MAPPING, [])).reason, "missing-claim");
    assert.deepEqual(callerOf({ sub: "ann", scope: "a" }, MAPPING, [() => undefined]), {
      name: "ann",
      authorities: ["SCOPE_a"],
      claims: { sub: "ann", scope: "a" },
    });
  });
});

describe("security({ validators })", () => {
  async function start(validators: TokenValidator[]) {
    const tokens = await testTokens();
    const logger = memoryLogger();
    const app = await bootstrap({
      config: tokens.config,
      security: security({ validators }),
      logger,
    });
    const call = async (claims: Record<string, unknown>) =>
      await app.fetch(
        new Request("http://localhost/nowhere", {
          headers: { authorization: await tokens.bearer(claims) },
        }),
      );
    return { app, logger, call };
  }

  it("refuses a token a validator refuses, with its words as error_description", async () => {
    const { app, logger, call } = await start([
      (claims) => claims.tenant === "acme" ? undefined : `not for tenant ${String(claims.tenant)}`,
    ]);
    try {
      assert.equal((await call({ tenant: "acme" })).status, 404);
      const refused = await call({ tenant: "globex" });
      assert.equal(refused.status, 401);
      assert.equal(
        refused.headers.get("www-authenticate"),
        'Bearer error="invalid_token", error_description="not for tenant globex"',
      );
      assert.equal(await refused.text(), '{"error":"invalid_token"}');
      assert.match(
        String(logger.lines.at(-1)?.[0]),
        /\(validator\): validator 0 .*"not for tenant globex"/,
      );
    } finally {
      await app.close();
    }
  });

  it("keeps a claim's every byte value out of the header's syntax and off the log's lines", async () => {
    const { app, logger, call } = await start([(claims) => `bad tenant ${String(claims.tenant)}`]);
    try {
      for (let code = 0; code < 256; code++) {
        const tenant = `x${String.fromCharCode(code)}", error="none\r\nSet-Cookie: a=b`;
        const refused = await call({ tenant });
        assert.equal(refused.status, 401);
        const header = refused.headers.get("www-authenticate") ?? "";
        assert.match(header, /^Bearer error="invalid_token", error_description="[^"\\]*"$/, header);
        assert.equal(refused.headers.get("set-cookie"), null);
        await refused.body?.cancel();
      }
      for (const [line] of logger.lines) assert.ok(!/[\r\n]/.test(String(line)), String(line));
    } finally {
      await app.close();
    }
  });

  it("refuses, with no description, when a validator throws or answers a promise", async () => {
    const { app, logger, call } = await start([
      (claims) => {
        if (claims.boom) throw new Error("the tenant list is not loaded");
        return undefined;
      },
      (claims) => (claims.later ? Promise.resolve(undefined) : undefined) as string | undefined,
    ]);
    try {
      assert.equal((await call({})).status, 404);
      for (const claims of [{ boom: true }, { later: true }]) {
        const refused = await call(claims);
        assert.equal(refused.status, 401);
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
      }
      const logged = logger.lines.map(([line]) => String(line)).join("\n");
      assert.match(logged, /validator 0 .*could not answer: the tenant list is not loaded/);
      assert.match(logged, /validator 1 .*could not answer: it answered a promise/);
    } finally {
      await app.close();
    }
  });

  it("is refused where it cannot be used", async () => {
    assert.throws(
      () => security({ validators: ["tenant == acme"] as never }),
      /security\(\{ validators \}\): give a list of functions/,
    );
    assert.throws(() => security({ validators: (() => undefined) as never }), /give a list/);
    // With no bearer tokens on, a validator would check nothing.
    await assert.rejects(
      bootstrap({
        config: { security: { "api-keys": { keys: { ci: { key: "k".repeat(40) } } } } },
        security: security({ validators: [() => undefined] }),
        logger: memoryLogger(),
      }),
      /the validators check bearer tokens, and none are on/,
    );
  });
});
