// The answer to a call method security refused at the edge of a request: the challenges of the
// schemes that are on, with their realms, the same a guarded route answers; the scopes of a 403
// only where bearer tokens are on.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as jose from "jose";
import { Autowired, bootstrap, GetMapping, RestController, Service } from "../../mod.ts";
import { hashPassword, PermitAll, Secured, security, type UserDetails } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { memoryUsers } from "./memory_users.ts";

const ITERATIONS = 1000;
const API_KEY = "k-0123456789abcdef-batch";
let users: Record<string, UserDetails> = {};
const Users = memoryUsers(() => users);

@Service()
class Ledger {
  @Secured("ROLE_ADMIN")
  close(): string {
    return "closed";
  }

  @Secured("SCOPE_ledger:write")
  write(): string {
    return "written";
  }
}

// Open routes: what refuses an anonymous client here is the bean's method, not the route's guard.
@RestController()
@PermitAll()
class Desk {
  @Autowired(Ledger)
  ledger!: Ledger;

  @GetMapping("/close")
  close(): string {
    return this.ledger.close();
  }

  @GetMapping("/write")
  write(): string {
    return this.ledger.write();
  }
}

@RestController()
class Guarded {
  @GetMapping("/guarded")
  guarded(): string {
    return "guarded";
  }
}

const basic = (user: string, password: string) => ({
  authorization: `Basic ${btoa(`${user}:${password}`)}`,
});

describe("method security's challenges", () => {
  const start = async (
    config: Record<string, unknown>,
    realm?: string,
  ) => {
    users = {
      bob: {
        username: "bob",
        password: await hashPassword("s3cret-bob", { iterations: ITERATIONS }),
        authorities: ["ROLE_USER"],
      },
    };
    const logger = memoryLogger();
    const app = await bootstrap({
      controllers: [Desk, Guarded],
      components: [Ledger, Users],
      config,
      security: security(realm === undefined ? {} : { realm }),
      logger,
    });
    const get = (path: string, headers: Record<string, string> = {}) =>
      app.fetch(new Request(`http://localhost${path}`, { headers }));
    return { app, get, logger };
  };

  it("challenges with HTTP Basic alone where it is the only scheme, with its realm", async () => {
    const { app, get } = await start({
      security: { basic: { iterations: ITERATIONS, realm: "ledger" } },
    });
    try {
      const route = await get("/guarded");
      assert.equal(route.status, 401);
      assert.equal(route.headers.get("www-authenticate"), 'Basic realm="ledger", charset="UTF-8"');
      const method = await get("/close");
      assert.equal(method.status, 401);
      assert.equal(method.headers.get("www-authenticate"), route.headers.get("www-authenticate"));
      await method.body?.cancel();
      // A Basic caller refused for a scope: a 403 with no bearer challenge, which could not help.
      const scoped = await get("/write", basic("bob", "s3cret-bob"));
      assert.equal(scoped.status, 403);
      assert.equal(scoped.headers.get("www-authenticate"), null);
      await scoped.body?.cancel();
    } finally {
      await app.close();
    }
  });

  it("takes security({ realm }) for HTTP Basic when security.basic.realm is not set", async () => {
    const { app, get } = await start({ security: { basic: { iterations: ITERATIONS } } }, "x");
    try {
      for (const path of ["/guarded", "/close"]) {
        const res = await get(path);
        assert.equal(res.status, 401, path);
        assert.equal(res.headers.get("www-authenticate"), 'Basic realm="x", charset="UTF-8"', path);
        await res.body?.cancel();
      }
    } finally {
      await app.close();
    }
  });

  it("answers as a guarded route does with every scheme on, each with its realm", async () => {
    const { publicKey, privateKey } = await jose.generateKeyPair("ES256");
    const { app, get } = await start({
      security: {
        oauth2: { resourceserver: { jwt: { "public-key": await jose.exportSPKI(publicKey) } } },
        basic: { iterations: ITERATIONS, realm: "staff" },
        "api-keys": { keys: { batch: { key: API_KEY, authorities: ["ROLE_BATCH"] } } },
      },
    }, "ledger");
    try {
      const all = 'Bearer realm="ledger", Basic realm="staff", charset="UTF-8", ' +
        'ApiKey header="X-API-Key"';
      const route = await get("/guarded");
      assert.equal(route.headers.get("www-authenticate"), all);
      const method = await get("/close");
      assert.equal(method.status, 401);
      assert.equal(method.headers.get("www-authenticate"), all);
      await method.body?.cancel();
      const jwt = await new jose.SignJWT({ scope: "ledger:read" })
        .setProtectedHeader({ alg: "ES256" })
        .setSubject("ann")
        .setExpirationTime("5m")
        .sign(privateKey);
      const scoped = await get("/write", { authorization: `Bearer ${jwt}` });
      assert.equal(scoped.status, 403);
      assert.equal(
        scoped.headers.get("www-authenticate"),
        'Bearer realm="ledger", error="insufficient_scope", scope="ledger:write"',
      );
      await scoped.body?.cancel();
      // A caller of another scheme refused for a scope is not told to get a bearer scope.
      for (const headers of [basic("bob", "s3cret-bob"), { "x-api-key": API_KEY }]) {
        const other = await get("/write", headers);
        assert.equal(other.status, 403, Object.keys(headers)[0]);
        assert.equal(other.headers.get("www-authenticate"), null, Object.keys(headers)[0]);
        await other.body?.cancel();
      }
    } finally {
      await app.close();
    }
  });

  it("tells a client nothing of the method refused, and the log which and why", async () => {
    const { app, get, logger } = await start({ security: { basic: { iterations: ITERATIONS } } });
    try {
      const anonymous = await get("/close");
      assert.equal(anonymous.status, 401);
      const refused = await get("/close", basic("bob", "s3cret-bob"));
      assert.equal(refused.status, 403);
      for (const body of [await anonymous.json(), await refused.json()]) {
        assert.equal(body.error, "Access denied");
        assert.doesNotMatch(JSON.stringify(body), /Ledger|close/);
      }
      const logged = logger.lines.map((line) => String(line[0]));
      assert.deepEqual(logged, [
        "Ledger.close(): access denied (no-caller)",
        "Ledger.close(): access denied (authority)",
      ]);
    } finally {
      await app.close();
    }
  });
});
