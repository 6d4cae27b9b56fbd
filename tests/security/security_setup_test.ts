// `bootstrap({ security: security() })` against an issuer on loopback: the routes it guards and
// those it opens, the 401 answers of RFC 6750 and their log lines, the caller bound to the
// request's async calls, and what stops bootstrap.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Autowired,
  bootstrap,
  GetMapping,
  PathVariable,
  RequestMapping,
  RestController,
  Service,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { listen } from "../../server.ts";
import {
  type Authentication,
  PermitAll,
  Principal,
  security,
  SecurityContext,
} from "../../security.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { DefinitionError } from "../../src/context/errors.ts";
import { memoryLogger } from "../helpers.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

@Service()
class Audit {
  /** The caller as a call the handler does not await sees it, once it ran. */
  later: Promise<string | undefined> = Promise.resolve(undefined);

  who(): string | undefined {
    this.later = new Promise((resolve) =>
      setTimeout(() => resolve(SecurityContext.current()?.name), 1)
    );
    return SecurityContext.current()?.name;
  }
}

@RestController()
@RequestMapping("/orders")
class Orders {
  @Autowired(Audit)
  audit!: Audit;

  @GetMapping("/{id}", PathVariable("id"), Principal())
  async get(id: string, caller: Authentication): Promise<Record<string, unknown>> {
    await Promise.resolve();
    return { id, name: caller.name, authorities: caller.authorities, seen: this.audit.who() };
  }
}

@RestController()
@RequestMapping("/open")
@PermitAll()
class Open {
  @GetMapping("/ping")
  ping(): string {
    return "pong";
  }
}

@RestController()
@RequestMapping("/mixed")
class Mixed {
  @GetMapping("/public")
  @PermitAll()
  open(): string {
    return "anyone";
  }

  @GetMapping("/private")
  closed(): string {
    return "caller only";
  }
}

@RestController()
@RequestMapping("/listed")
class Listed {
  @GetMapping("/{id}", PathVariable("id"))
  one(id: string): string {
    return `one ${id}`;
  }

  @GetMapping("/deep/a/b")
  deep(): string {
    return "deep";
  }
}

const jwtConfig = (jwt: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...extra,
  security: {
    ...(extra.security as Record<string, unknown> | undefined),
    oauth2: { resourceserver: { jwt } },
  },
});

describe("bootstrap({ security: security() })", () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
  });
  after(() => issuer.down());

  const start = async (extra: Record<string, unknown> = {}) => {
    const logger = memoryLogger();
    const app = await bootstrap({
      controllers: [Orders, Open, Mixed, Listed],
      components: [Audit],
      config: jwtConfig({ "issuer-uri": issuer.url, audiences: ["orders"] }, {
        ...extra,
        management: { endpoints: { web: { exposure: { include: ["health", "info"] } } } },
      }),
      security: security(),
      actuator: actuator(),
      logger,
    });
    const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
      app.fetch(new Request(`http://localhost${path}`, { method, headers }));
    return { app, logger, get };
  };
  const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

  it("refuses a route without a token with 401 Bearer and no body; runs it for a valid one", async () => {
    const { app, get } = await start();
    try {
      for (const method of ["GET", "HEAD"]) {
        const refused = await get("/orders/7", {}, method);
        assert.equal(refused.status, 401, method);
        assert.equal(refused.headers.get("www-authenticate"), "Bearer");
        assert.equal(await refused.text(), "");
      }
      const jwt = await token(key, {
        iss: issuer.url,
        aud: "orders",
        sub: "alice",
        scope: "orders:read",
      }, Date.now());
      const served = await get("/orders/7", bearer(jwt));
      assert.equal(served.status, 200);
      const body = await served.json();
      assert.deepEqual(body, {
        id: "7",
        name: "alice",
        authorities: ["SCOPE_orders:read"],
        seen: "alice",
      });
      // A call the handler began and never awaited still runs as the caller's.
      assert.equal(await app.getBean(Audit).later, "alice");
      // Outside the request, no one.
      assert.equal(SecurityContext.current(), undefined);
    } finally {
      await app.close();
    }
  });

  it("answers a refused token 401 invalid_token, the body the code alone, the log line the reason", async () => {
    const { app, get, logger } = await start();
    try {
      const now = Date.now();
      const cases: [string, string][] = [
        [
          await token(
            key,
            { iss: issuer.url, aud: "orders", exp: Math.floor(now / 1000) - 3600 },
            now,
          ),
          "expired",
        ],
        [await token(key, { iss: issuer.url, aud: "billing" }, now), "wrong-audience"],
        [await token(key, { iss: "http://elsewhere", aud: "orders" }, now), "wrong-issuer"],
        [
          await token({ ...key, kid: "unknown" }, { iss: issuer.url, aud: "orders" }, now),
          "unknown-key",
        ],
        [
          await token(key, { iss: issuer.url, aud: "orders", sub: "" }, now),
          "missing-claim",
        ],
        // A name that would write a line of its own wherever it is logged, as Basic refuses one.
        ...await Promise.all(["ada\r\nadmin", "ada\n", "\radmin", "ada\u0000"].map(async (sub) =>
          [
            await token(key, { iss: issuer.url, aud: "orders", sub }, now),
            "missing-claim",
          ] as [string, string]
        )),
      ];
      for (const [jwt, reason] of cases) {
        logger.lines.length = 0;
        const res = await get("/orders/7", bearer(jwt));
        assert.equal(res.status, 401, reason);
        assert.equal(res.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
        assert.equal(await res.text(), '{"error":"invalid_token"}');
        const logged = logger.lines.map((line) => String(line[0])).join("\n");
        assert.match(logged, new RegExp(`^Orders\\.get .*: bearer token refused \\(${reason}\\)`));
        for (const part of jwt.split(".")) assert.ok(!logged.includes(part), logged);
      }
      const malformed = await get("/orders/7", { authorization: "Bearer a b" });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.headers.get("www-authenticate"), 'Bearer error="invalid_request"');
    } finally {
      await app.close();
    }
  });

  it("opens @PermitAll() classes and methods, security.permit-all paths and health; guards the rest", async () => {
    const { app, get } = await start({
      security: { "permit-all": ["/listed/{id}", "/listed/deep/**"] },
    });
    try {
      const open = [
        "/open/ping",
        "/mixed/public",
        "/listed/3",
        "/listed/deep/a/b",
        "/actuator/health",
        "/actuator/health/liveness",
        "/actuator/health/readiness",
      ];
      for (const path of open) assert.equal((await get(path)).status, 200, path);
      for (const path of ["/mixed/private", "/orders/1", "/actuator/info", "/actuator"]) {
        assert.equal((await get(path)).status, 401, path);
      }
      // No route: 401 to no one, as Spring's anyRequest().authenticated() (which paths exist is
      // no anonymous client's to learn); 404 under a security.permit-all path, and to a caller.
      assert.equal((await get("/nowhere")).status, 401);
      assert.equal((await get("/listed/deep/none")).status, 404);
      const jwt = await token(key, { iss: issuer.url, aud: "orders" }, Date.now());
      assert.equal((await get("/nowhere", bearer(jwt))).status, 404);
    } finally {
      await app.close();
    }
  });

  it("guards the actuator on a port of its own alike: health open, the rest needs a caller", async () => {
    const app = await bootstrap({
      config: {
        ...jwtConfig({ "issuer-uri": issuer.url }),
        management: {
          server: { port: 0, address: "127.0.0.1" },
          endpoints: { web: { exposure: { include: ["health", "info"] } } },
        },
      },
      security: security(),
      actuator: actuator(),
      logger: memoryLogger(),
    });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    try {
      const base = server.management!.url;
      const health = await fetch(new URL("/actuator/health", base));
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const info = await fetch(new URL("/actuator/info", base));
      assert.equal(info.status, 401);
      assert.equal(info.headers.get("www-authenticate"), "Bearer");
      await info.body?.cancel();
      const jwt = await token(key, { iss: issuer.url }, Date.now());
      const allowed = await fetch(new URL("/actuator/info", base), { headers: bearer(jwt) });
      assert.equal(allowed.status, 200);
      await allowed.body?.cancel();
    } finally {
      await server.close();
    }
  });

  it("names the caller by principal-claim-name, refusing a token without that claim", async () => {
    const logger = memoryLogger();
    const app = await bootstrap({
      controllers: [Orders],
      components: [Audit],
      config: jwtConfig({
        "issuer-uri": issuer.url,
        "principal-claim-name": "preferred_username",
      }),
      security: security(),
      logger,
    });
    try {
      const get = async (claims: Record<string, unknown>) =>
        await app.fetch(
          new Request("http://localhost/orders/7", {
            headers: bearer(
              await token(key, { iss: issuer.url, sub: "alice", ...claims }, Date.now()),
            ),
          }),
        );
      const named = await get({ preferred_username: "ada" });
      assert.equal(named.status, 200);
      assert.equal((await named.json()).name, "ada");
      // The sub is no stand-in for the claim named: the token names no one.
      for (const claims of [{}, { preferred_username: 42 }, { preferred_username: "" }]) {
        logger.lines.length = 0;
        const refused = await get(claims);
        assert.equal(refused.status, 401, JSON.stringify(claims));
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
        assert.match(
          String(logger.lines[0]?.[0]),
          /bearer token refused \(missing-claim\): the token's claim "preferred_username" is missing or not a name$/,
        );
      }
    } finally {
      await app.close();
    }
  });

  it("opens every route with security.permit-all /**, the root's included", async () => {
    @RestController()
    class Root {
      @GetMapping("/")
      home(): string {
        return "home";
      }
    }
    const app = await bootstrap({
      controllers: [Root, Mixed, Listed],
      config: jwtConfig({ "issuer-uri": issuer.url }, { security: { "permit-all": ["/**"] } }),
      security: security(),
      logger: memoryLogger(),
    });
    try {
      for (const path of ["/", "/mixed/private", "/listed/7", "/listed/deep/a/b"]) {
        const res = await app.fetch(new Request(`http://localhost${path}`));
        assert.equal(res.status, 200, path);
      }
    } finally {
      await app.close();
    }
  });

  it("stops bootstrap: the keys without the option, no key source, a permit-all that is no route's path, Principal() on an open route", async () => {
    await assert.rejects(
      bootstrap({ config: jwtConfig({ "issuer-uri": issuer.url }) }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.message.includes('import { security } from "@thaw/thaw/security"') &&
        error.message.includes("bootstrap({ security: security() })"),
    );
    await assert.rejects(
      bootstrap({ security: security() }),
      (error: Error) => error instanceof ConfigError && /jwt\.issuer-uri/.test(error.message),
    );
    await assert.rejects(
      bootstrap({
        config: jwtConfig({ "issuer-uri": issuer.url }, {
          security: { "permit-all": ["open/**"] },
        }),
        security: security(),
      }),
      (error: Error) => error instanceof ConfigError && /security\.permit-all/.test(error.message),
    );
    // Spellings that would match no route, and leave guarded what the list means to open.
    for (const pattern of ["/public/*", "/a/**/b", "/docs/", "/*.json"]) {
      await assert.rejects(
        bootstrap({
          config: jwtConfig({ "issuer-uri": issuer.url }, {
            security: { "permit-all": [pattern] },
          }),
          security: security(),
        }),
        (error: Error) =>
          error instanceof ConfigError && error.message.includes("security.permit-all") &&
          error.message.includes(JSON.stringify(pattern)) && error.message.includes("/**"),
        pattern,
      );
    }
    @RestController()
    @PermitAll()
    class Leaky {
      @GetMapping("/me", Principal())
      me(caller: Authentication): string {
        return caller.name;
      }
    }
    await assert.rejects(
      bootstrap({
        controllers: [Leaky],
        config: jwtConfig({ "issuer-uri": issuer.url }),
        security: security(),
      }),
      (error: Error) =>
        error instanceof DefinitionError &&
        /Leaky\.me .*Principal\(\) on a route any caller/.test(error.message),
    );
  });
});
