// HTTP Basic against a UserDetailsService: who is let in, with what, and what every refusal costs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/application_config.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import "../../src/config/security_scheme_keys.ts";
import { BasicAuthenticator } from "../../src/security/basic_authenticator.ts";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { memoryUsers } from "./memory_users.ts";
import { security } from "../../security.ts";
import { hashPassword } from "../../src/security/password_hash.ts";
import type { UserDetails, UserDetailsService } from "../../src/security/user_details.ts";

const ITERATIONS = 1000;
const header = (text: string) => `Basic ${btoa(text)}`;

async function service(): Promise<UserDetailsService & { asked: string[] }> {
  const users: Record<string, UserDetails> = {
    ada: {
      username: "ada",
      password: await hashPassword("s3cret", { iterations: ITERATIONS }),
      authorities: ["ROLE_ADMIN", "orders:write", "ROLE_ADMIN"],
    },
    bob: {
      username: "bob",
      password: await hashPassword("hunter2", { iterations: ITERATIONS }),
      authorities: [],
      enabled: false,
    },
    eve: { username: "eve", password: "{bcrypt}$2a$10$abc", authorities: [] },
    // Spring's documented hash of "password".
    sam: {
      username: "Sam",
      password:
        "{pbkdf2}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8dc",
      authorities: ["ROLE_USER"],
    },
  };
  const asked: string[] = [];
  return {
    asked,
    loadUserByUsername: (name) => {
      asked.push(name);
      return Promise.resolve(Object.hasOwn(users, name) ? users[name] : undefined);
    },
  };
}

describe("BasicAuthenticator", () => {
  it("lets in the right password, with the user's name and authorities", async () => {
    const basic = new BasicAuthenticator(await service(), { iterations: ITERATIONS });
    assert.deepEqual(await basic.authenticate(header("ada:s3cret")), {
      kind: "authenticated",
      authentication: { scheme: "basic", name: "ada", authorities: ["ROLE_ADMIN", "orders:write"] },
    });
    // The store's spelling of the name, and Spring's own hash form.
    assert.deepEqual(await basic.authenticate(header("sam:password")), {
      kind: "authenticated",
      authentication: { scheme: "basic", name: "Sam", authorities: ["ROLE_USER"] },
    });
  });

  it("refuses each wrong case with its reason, and asks the store only for well-formed ones", async () => {
    const users = await service();
    const basic = new BasicAuthenticator(users, { iterations: ITERATIONS });
    const reason = async (value: string | null) => {
      const result = await basic.authenticate(value);
      return result.kind === "refused" ? result.reason : result.kind;
    };
    assert.equal(await reason(header("ada:s3cre")), "wrong-password");
    assert.equal(await reason(header("nobody:s3cret")), "unknown-user");
    assert.equal(await reason(header("constructor:x")), "unknown-user");
    assert.equal(await reason(header("bob:hunter2")), "disabled");
    assert.equal(await reason(header("bob:hunter")), "wrong-password");
    assert.equal(await reason(header("eve:anything")), "unreadable-hash");
    assert.equal(await reason("Basic !!!"), "malformed");
    assert.equal(await reason(header("ada\u0000:s3cret")), "malformed");
    assert.equal(await reason(null), "missing");
    assert.equal(await reason("Bearer abc"), "missing");
    assert.deepEqual(users.asked, ["ada", "nobody", "constructor", "bob", "bob", "eve"]);
  });

  it("names the bean, never the user, when it returns what is not a user", async () => {
    const basic = new BasicAuthenticator(
      { loadUserByUsername: () => Promise.resolve({ username: "ada" } as unknown as UserDetails) },
      { iterations: ITERATIONS, beanName: "AccountUsers" },
    );
    await assert.rejects(basic.authenticate(header("ada:secret-password")), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(
        error.message,
        /^AccountUsers\.loadUserByUsername returned what is not a UserDetails/,
      );
      assert.doesNotMatch(error.message, /secret-password/);
      return true;
    });
  });

  it("derives against a dummy hash of the same cost for an unknown user", async () => {
    // Counted, not timed: the number of PBKDF2 derivations each case makes, and their cost.
    const derived: number[] = [];
    const subtle = crypto.subtle;
    const original = subtle.deriveBits;
    subtle.deriveBits = function (algorithm, key, length) {
      derived.push((algorithm as Pbkdf2Params).iterations);
      return original.call(subtle, algorithm, key, length as number);
    } as typeof subtle.deriveBits;
    try {
      const basic = new BasicAuthenticator(await service(), { iterations: ITERATIONS });
      for (const text of ["ada:wrong", "nobody:wrong", "bob:wrong", "eve:wrong", "ada:s3cret"]) {
        derived.length = 0;
        await basic.authenticate(header(text));
        assert.deepEqual(derived, [ITERATIONS], text);
      }
      const defaults = new BasicAuthenticator(await service());
      derived.length = 0;
      await defaults.authenticate(header("nobody:x"));
      assert.deepEqual(derived, [600_000]);
    } finally {
      subtle.deriveBits = original;
    }
  });

  it("checks unknown users at security.basic.iterations, within a capped PBKDF2 (Cloudflare's)", async () => {
    const read = (basic: unknown) =>
      readSettings(resolveConfig({ security: { basic } }, () => undefined)).get(
        "security.basic.iterations",
      );
    assert.equal(read(undefined), 600_000);
    assert.equal(read({ iterations: 100_000 }), 100_000);
    assert.throws(
      () => read({ iterations: 10 }),
      /security\.basic\.iterations must be an integer from 1000/,
    );
    // Cloudflare's hosted Workers refuse more than 100,000 iterations; the local workerd does not.
    const subtle = crypto.subtle;
    const original = subtle.deriveBits;
    subtle.deriveBits = function (algorithm, key, length) {
      if ((algorithm as Pbkdf2Params).iterations > 100_000) {
        return Promise.reject(
          new DOMException(
            "Pbkdf2 failed: iteration counts above 100000 are not supported",
            "NotSupportedError",
          ),
        );
      }
      return original.call(subtle, algorithm, key, length as number);
    } as typeof subtle.deriveBits;
    try {
      const users = await service();
      const capped = new BasicAuthenticator(users, { iterations: read({ iterations: 100_000 }) });
      assert.deepEqual(await capped.authenticate(header("nobody:x")), {
        kind: "refused",
        scheme: "basic",
        reason: "unknown-user",
      });
      await assert.rejects(
        new BasicAuthenticator(users).authenticate(header("nobody:x")),
        /iteration counts above 100000/,
      );
    } finally {
      subtle.deriveBits = original;
    }
  });
});

describe("BasicAuthenticator under a flood of checks", () => {
  it("runs its password checks a few at a time, and refuses past its queue as busy", async () => {
    const basic = new BasicAuthenticator(await service(), {
      iterations: ITERATIONS,
      parallelChecks: 1,
      queuedChecks: 2,
    });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => basic.authenticate(header("ada:wrong"))),
    );
    const reasons = results.map((r) => r.kind === "refused" ? r.reason : r.kind);
    assert.deepEqual(reasons.filter((r) => r === "wrong-password").length, 3);
    assert.deepEqual(reasons.filter((r) => r === "busy").length, 7);
    // Places free again once the checks ended.
    assert.deepEqual(await basic.authenticate(header("ada:s3cret")), {
      kind: "authenticated",
      authentication: { scheme: "basic", name: "ada", authorities: ["ROLE_ADMIN", "orders:write"] },
    });
  });

  it("answers a request past the queue 503 with Retry-After, the others 401", async () => {
    const ada = {
      username: "ada",
      password: await hashPassword("s3cret", { iterations: ITERATIONS }),
      authorities: [],
    };
    const Users = memoryUsers(() => ({ ada }));
    @RestController()
    class Api {
      @GetMapping("/api")
      api(): string {
        return "ok";
      }
    }
    const app = await bootstrap({
      controllers: [Api],
      components: [Users],
      config: { security: { basic: { iterations: ITERATIONS } } },
      security: security(),
      logger: { error() {}, warn() {}, info() {} },
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          app.fetch(
            new Request("http://localhost/api", {
              headers: { authorization: header("ada:wrong") },
            }),
          )),
      );
      const statuses = answers.map((a) => a.status);
      assert.ok(statuses.every((s) => s === 401 || s === 503), statuses.join(","));
      const busy = answers.filter((a) => a.status === 503);
      assert.ok(busy.length > 0, "some were refused as busy");
      for (const answer of busy) assert.equal(answer.headers.get("retry-after"), "1");
      assert.ok(statuses.includes(401));
      await Promise.all(answers.map((a) => a.body?.cancel()));
    } finally {
      await app.close();
    }
  });
});
