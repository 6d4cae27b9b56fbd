// `security()` with HTTP Basic and API keys beside the bearer token, through listen(app) over real
// HTTP: the schemes that are on, callers of each reaching secured routes with their authorities,
// every refusal answered 401 with a challenge per scheme and logged with its reason alone,
// hostile headers (every byte value, a megabyte) answered without a throw nor an echo, and an app
// with no scheme at all stopped at bootstrap.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController, Service } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import {
  type Authentication,
  hashPassword,
  Principal,
  Secured,
  security,
  type UserDetails,
  UserDetailsService,
} from "../../security.ts";
import { ConfigError } from "../../src/config/config_error.ts";
import { DefinitionError } from "../../src/context/errors.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { exchange, request } from "../runtime/raw_client.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";
import { memoryUsers } from "./memory_users.ts";

const ITERATIONS = 1000;
const API_KEY = "k-0123456789abcdef-batch";
let users: Record<string, UserDetails> = {};

const Users = memoryUsers(() => users);

@RestController()
class Routes {
  @GetMapping("/me", Principal())
  me(caller: Authentication): Authentication {
    return caller;
  }

  @GetMapping("/admin")
  @Secured("ROLE_ADMIN")
  admin(): string {
    return "SECRET admin";
  }

  @GetMapping("/batch")
  @Secured("ROLE_BATCH")
  batch(): string {
    return "SECRET batch";
  }
}

const ALL_CHALLENGES = 'Bearer, Basic realm="Realm", charset="UTF-8", ApiKey header="X-API-Key"';
const basic = (user: string, password: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`)))}`;

describe(`security() with HTTP Basic and API keys through listen(app) on ${RUNTIME}`, () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    const options = { iterations: ITERATIONS };
    users = {
      ada: {
        username: "ada",
        password: await hashPassword("s3cret-ada", options),
        authorities: ["ROLE_ADMIN"],
      },
      bob: {
        username: "bob",
        password: await hashPassword("s3cret-bob", options),
        authorities: ["ROLE_USER"],
      },
      eve: {
        username: "eve",
        password: await hashPassword("s3cret-eve", options),
        authorities: ["ROLE_ADMIN"],
        enabled: false,
      },
    };
  });
  after(() => issuer.down());

  const start = async (config: Record<string, unknown>, components: unknown[] = [Users]) => {
    const logger = memoryLogger();
    const app = await bootstrap({
      controllers: [Routes],
      components: components as (typeof Users)[],
      config,
      security: security(),
      logger,
    });
    const server: Server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(new URL(path, server.url), { headers });
    return { app, server, logger, get, port: server.port };
  };
  const everyScheme = () => ({
    security: {
      oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } },
      basic: { iterations: ITERATIONS },
      "api-keys": { keys: { batch: { key: API_KEY, authorities: ["ROLE_BATCH"] } } },
    },
  });

  it("lets a Basic caller and an API-key caller in, @Secured checking their authorities", async () => {
    const { server, get } = await start(everyScheme());
    try {
      const ada = { authorization: basic("ada", "s3cret-ada") };
      const me = await get("/me", ada);
      assert.equal(me.status, 200);
      assert.deepEqual(await me.json(), { name: "ada", authorities: ["ROLE_ADMIN"], claims: {} });
      assert.equal(await (await get("/admin", ada)).text(), "SECRET admin");
      const denied = await get("/batch", ada);
      assert.equal(denied.status, 403);
      await denied.body?.cancel();

      const bob = await get("/admin", { authorization: basic("bob", "s3cret-bob") });
      assert.equal(bob.status, 403);
      await bob.body?.cancel();

      const batch = { "x-api-key": API_KEY };
      assert.deepEqual(await (await get("/me", batch)).json(), {
        name: "batch",
        authorities: ["ROLE_BATCH"],
        claims: {},
      });
      assert.equal(await (await get("/batch", batch)).text(), "SECRET batch");
      const notAdmin = await get("/admin", batch);
      assert.equal(notAdmin.status, 403);
      await notAdmin.body?.cancel();

      // The bearer token still works beside them.
      const jwt = await token(key, { iss: issuer.url, sub: "carol" }, Date.now());
      const carol = await get("/me", { authorization: `Bearer ${jwt}` });
      assert.equal((await carol.json()).name, "carol");
    } finally {
      await server.close();
    }
  });

  it("refuses wrong passwords, unknown users, disabled users and bad keys 401 with every challenge, logging the reason alone", async () => {
    const { server, get, logger } = await start(everyScheme());
    try {
      const cases: [Record<string, string>, string, string[]][] = [
        [{}, "", []],
        [
          { authorization: basic("ada", "guess-ada") },
          "HTTP Basic credentials refused (wrong-password)",
          ["guess-ada", "ada"],
        ],
        [
          { authorization: basic("mallory", "s3cret-ada") },
          "HTTP Basic credentials refused (unknown-user)",
          ["mallory", "s3cret-ada"],
        ],
        [
          { authorization: basic("eve", "s3cret-eve") },
          "HTTP Basic credentials refused (disabled)",
          ["eve", "s3cret-eve"],
        ],
        [{ authorization: "Basic not*base64" }, "HTTP Basic credentials refused (malformed)", [
          "not*base64",
        ]],
        [{ "x-api-key": "k-0123456789abcdef-wrong" }, "API key refused (unknown-key)", [
          "k-0123456789abcdef-wrong",
        ]],
        [{ "x-api-key": "k 0123456789abcdef" }, "API key refused (malformed)", [
          "k 0123456789abcdef",
        ]],
      ];
      for (const [headers, line, secrets] of cases) {
        logger.lines.length = 0;
        const res = await get("/me", headers);
        const what = JSON.stringify(headers);
        assert.equal(res.status, 401, what);
        assert.equal(res.headers.get("www-authenticate"), ALL_CHALLENGES, what);
        assert.equal(await res.text(), "", what);
        const logged = logger.lines.map((l) => String(l[0])).join("\n");
        if (line === "") assert.equal(logged, "", what);
        else {assert.match(
            logged,
            new RegExp(`^Routes\\.me .*: ${line.replace(/[()]/g, "\\$&")}$`),
            what,
          );}
        for (const secret of secrets) {
          assert.ok(!logged.replace(line, "").includes(secret), `${what}: ${logged}`);
        }
      }
      // A refused token: its error code on the Bearer challenge, the other schemes after it.
      const forged = await token({ ...key, kid: "unknown" }, { iss: issuer.url }, Date.now());
      const refused = await get("/me", { authorization: `Bearer ${forged}` });
      assert.equal(refused.status, 401);
      assert.equal(
        refused.headers.get("www-authenticate"),
        'Bearer error="invalid_token", Basic realm="Realm", charset="UTF-8", ApiKey header="X-API-Key"',
      );
      assert.equal(await refused.text(), '{"error":"invalid_token"}');
    } finally {
      await server.close();
    }
  });

  it("turns on only the schemes configured: API keys alone, Basic alone", async () => {
    const keysOnly = await start({
      security: { "api-keys": { "header-name": "X-Batch-Key", keys: { batch: { key: API_KEY } } } },
    }, []);
    try {
      for (
        const headers of [{}, { authorization: basic("ada", "s3cret-ada") }, {
          authorization: "Bearer abc",
        }]
      ) {
        const res = await keysOnly.get("/me", headers);
        assert.equal(res.status, 401);
        assert.equal(res.headers.get("www-authenticate"), 'ApiKey header="X-Batch-Key"');
        await res.body?.cancel();
      }
      assert.equal(
        (await (await keysOnly.get("/me", { "x-batch-key": API_KEY })).json()).name,
        "batch",
      );
    } finally {
      await keysOnly.server.close();
    }
    const basicOnly = await start({
      security: { basic: { iterations: ITERATIONS, realm: "orders" } },
    });
    try {
      const res = await basicOnly.get("/me", { "x-api-key": API_KEY });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get("www-authenticate"), 'Basic realm="orders", charset="UTF-8"');
      await res.body?.cancel();
      const ada = await basicOnly.get("/me", { authorization: basic("ada", "s3cret-ada") });
      assert.equal((await ada.json()).name, "ada");
    } finally {
      await basicOnly.server.close();
    }
  });

  it("answers hostile headers, every byte value and a megabyte, without a throw or an echo", async () => {
    const { app, server, port, logger } = await start(everyScheme());
    try {
      const marker = "ZQXJ";
      for (let byte = 0; byte < 256; byte++) {
        const c = String.fromCharCode(byte);
        const values = [
          `Authorization: Basic ${marker}${c}${marker}`,
          `Authorization: Basic ${btoa(`${marker}${c}:${marker}${c}`)}`,
          `Authorization: ${c}asic ${marker}`,
          `X-API-Key: ${marker}0123456789abcdef${c}${marker}`,
        ];
        for (const header of values) {
          const answer = await exchange(port, request("GET", "/me", [header]));
          const what = `byte ${byte}: ${JSON.stringify(header)}`;
          assert.ok([400, 401, 431].includes(answer.status), `${what}: ${answer.status}`);
          assert.ok(!answer.bytes.includes(marker), what);
          assert.doesNotMatch(answer.bytes, /SECRET/, what);
        }
      }
      const huge = "A".repeat(1024 * 1024);
      for (
        const header of [
          `Authorization: Basic ${huge}`,
          `X-API-Key: ${huge}`,
          `Authorization: Bearer ${huge}`,
        ]
      ) {
        const answer = await exchange(port, request("GET", "/me", [header]));
        assert.ok(
          [400, 401, 413, 431, 0].includes(answer.status),
          `${header.slice(0, 20)}: ${answer.status}`,
        );
        assert.ok(!answer.bytes.includes(huge.slice(0, 64)), header.slice(0, 20));
      }
      // Past the server's limits, in the app itself: refused with the reason, nothing echoed.
      for (const headers of [{ authorization: `Basic ${huge}` }, { "x-api-key": huge }]) {
        logger.lines.length = 0;
        const res = await app.fetch(new Request("http://localhost/me", { headers }));
        assert.equal(res.status, 401);
        assert.equal(await res.text(), "");
        assert.match(String(logger.lines[0]?.[0]), /refused \(malformed\)$/);
        assert.ok(!logger.lines.flat().join("").includes(huge.slice(0, 64)));
      }
      // Still serving.
      const ok = await exchange(port, request("GET", "/me", [`X-API-Key: ${API_KEY}`]));
      assert.equal(ok.status, 200);
    } finally {
      await server.close();
    }
  });

  it("answers a failing store 500, a bean returning what is no user 500 naming the bean, never the password", async () => {
    @Service()
    class BrokenUsers extends UserDetailsService {
      loadUserByUsername(name: string): Promise<UserDetails | undefined> {
        if (name === "down") return Promise.reject(new Error("the user table is down"));
        return Promise.resolve({ username: name } as unknown as UserDetails);
      }
    }
    const { app, server, logger } = await start(
      { security: { basic: { iterations: ITERATIONS } } },
      [
        BrokenUsers,
      ],
    );
    try {
      for (
        const [user, said] of [["down", /the user table is down/], [
          "odd",
          /bean 'brokenUsers'.*not a UserDetails/,
        ]] as const
      ) {
        logger.lines.length = 0;
        const res = await app.fetch(
          new Request("http://localhost/me", {
            headers: { authorization: basic(user, "pw-SECRET-9") },
          }),
        );
        assert.equal(res.status, 500, user);
        assert.ok(!(await res.text()).includes("pw-SECRET-9"), user);
        const logged = logger.lines.flat().map((part) =>
          part instanceof Error ? `${part.message} ${part.stack}` : String(part)
        ).join("\n");
        assert.match(logged, said, user);
        assert.ok(!logged.includes("pw-SECRET-9"), logged);
      }
    } finally {
      await server.close();
    }
  });

  it("stops bootstrap with no scheme at all, or two UserDetailsService beans", async () => {
    await assert.rejects(
      bootstrap({ controllers: [Routes], security: security(), logger: memoryLogger() }),
      (error: Error) =>
        error instanceof ConfigError &&
        /no scheme to authenticate callers by/.test(error.message) &&
        /jwt\.issuer-uri/.test(error.message) && /security\.api-keys\.keys/.test(error.message) &&
        /extends UserDetailsService/.test(error.message),
    );
    @Service()
    class MoreUsers extends UserDetailsService {
      loadUserByUsername(): Promise<UserDetails | undefined> {
        return Promise.resolve(undefined);
      }
    }
    await assert.rejects(
      bootstrap({
        components: [Users, MoreUsers],
        security: security(),
        logger: memoryLogger(),
      }),
      (error: Error) =>
        error instanceof DefinitionError &&
        /2 beans extend UserDetailsService \('users' .*'moreUsers'/.test(error.message),
    );
  });
});
