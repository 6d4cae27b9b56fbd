// Credentials sent to a route anyone may reach (@PermitAll(), security.permit-all, health), as
// Spring Security's authentication filters check them on every path: none, and the route is
// served to no one; any of a scheme that is on, and they are checked as on a guarded route: a
// refused token, password or key is answered 401 (the same challenges, log line and reason), a
// valid one runs the route as its caller, whom a bean the handler calls sees.
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
import { listen, type Server } from "../../server.ts";
import {
  hashPassword,
  PermitAll,
  security,
  SecurityContext,
  type UserDetails,
} from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";
import { memoryUsers } from "./memory_users.ts";

const ITERATIONS = 1000;
const API_KEY = "k-0123456789abcdef-batch";
let users: Record<string, UserDetails> = {};

const Users = memoryUsers(() => users);

@Service()
class Audit {
  who(): string {
    const caller = SecurityContext.current();
    return caller === undefined ? "anonymous" : `${caller.name} ${caller.authorities.join(",")}`;
  }
}

@RestController()
@RequestMapping("/open")
@PermitAll()
class Open {
  @Autowired(Audit)
  audit!: Audit;

  @GetMapping("/who")
  who(): string {
    return this.audit.who();
  }
}

@RestController()
@RequestMapping("/listed")
class Listed {
  @Autowired(Audit)
  audit!: Audit;

  @GetMapping("/{id}", PathVariable("id"))
  one(id: string): string {
    return `${id} ${this.audit.who()}`;
  }
}

const ALL_CHALLENGES = 'Bearer, Basic realm="Realm", charset="UTF-8", ApiKey header="X-API-Key"';
const INVALID_TOKEN =
  'Bearer error="invalid_token", Basic realm="Realm", charset="UTF-8", ApiKey header="X-API-Key"';
const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

describe(`credentials sent to an open route, through listen(app) on ${RUNTIME}`, () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  let server: Server;
  const logger = memoryLogger();

  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    users = {
      ada: {
        username: "ada",
        password: await hashPassword("s3cret-ada", { iterations: ITERATIONS }),
        authorities: ["ROLE_ADMIN"],
      },
    };
    const app = await bootstrap({
      controllers: [Open, Listed],
      components: [Users, Audit],
      config: {
        security: {
          "permit-all": ["/listed/{id}"],
          oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } },
          basic: { iterations: ITERATIONS },
          "api-keys": { keys: { batch: { key: API_KEY, authorities: ["ROLE_BATCH"] } } },
        },
        management: { endpoints: { web: { exposure: { include: ["health"] } } } },
      },
      security: security(),
      actuator: actuator(),
      logger,
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
  });
  after(async () => {
    await server?.close();
    await issuer.down();
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(new URL(path, server.url), { headers });
    return {
      status: res.status,
      challenge: res.headers.get("www-authenticate"),
      body: await res.text(),
    };
  };
  const OPEN = ["/open/who", "/listed/7", "/actuator/health"];

  it("serves a request without credentials to no one, and one of a scheme that is off alike", async () => {
    for (const headers of [{}, { authorization: "Digest username=ada" }]) {
      assert.equal((await get("/open/who", headers)).body, "anonymous");
      assert.equal((await get("/listed/7", headers)).body, "7 anonymous");
      assert.equal((await get("/actuator/health", headers)).status, 200);
    }
  });

  it("refuses a forged or an expired token with 401 invalid_token, logged as on a guarded route", async () => {
    const forged = await token(
      { kid: "k1", alg: "HS256", privateKey: new TextEncoder().encode("x".repeat(32)) },
      { iss: issuer.url },
      Date.now(),
    );
    const expired = await token(key, { iss: issuer.url }, Date.now() - 7_200_000);
    for (const jwt of [forged, expired, "not.a.token"]) {
      for (const path of OPEN) {
        logger.lines.length = 0;
        const refused = await get(path, { authorization: `Bearer ${jwt}` });
        assert.equal(refused.status, 401, `${path} ${jwt}`);
        assert.equal(refused.challenge, INVALID_TOKEN, path);
        assert.doesNotMatch(refused.body, /anonymous|status/, path);
        assert.match(String(logger.lines[0]?.[0]), /: bearer token refused \(/, path);
      }
    }
  });

  it("refuses a wrong Basic password and an unknown API key with 401 and every challenge", async () => {
    const wrong = [
      { authorization: basic("ada", "wrong") },
      { authorization: basic("nobody", "s3cret-ada") },
      { "x-api-key": "k-not-a-configured-key" },
    ];
    for (const headers of wrong) {
      for (const path of OPEN) {
        logger.lines.length = 0;
        const refused = await get(path, headers);
        assert.equal(refused.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.equal(refused.challenge, ALL_CHALLENGES, path);
        assert.match(String(logger.lines[0]?.[0]), / refused \(/, path);
      }
    }
  });

  it("runs the route as the caller a valid token, password or key names", async () => {
    const jwt = await token(key, { iss: issuer.url, scope: "orders" }, Date.now());
    const callers: [Record<string, string>, string][] = [
      [{ authorization: `Bearer ${jwt}` }, "alice SCOPE_orders"],
      [{ authorization: basic("ada", "s3cret-ada") }, "ada ROLE_ADMIN"],
      [{ "x-api-key": API_KEY }, "batch ROLE_BATCH"],
    ];
    for (const [headers, caller] of callers) {
      assert.equal((await get("/open/who", headers)).body, caller);
      assert.equal((await get("/listed/7", headers)).body, `7 ${caller}`);
      assert.equal((await get("/actuator/health", headers)).status, 200);
    }
  });
});
