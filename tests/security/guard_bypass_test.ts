// Every way around a guard the web hardening suites try, against routes security() guards, over
// real HTTP through listen(app): other methods (HEAD, OPTIONS, a CORS preflight), a trailing or a
// doubled slash, dot segments plain and percent-encoded, an encoded slash, another case, and a
// request one route's regex turns away to the next route. The guard belongs to the route the
// router picked, so none of them reaches a guarded handler without a token.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cors } from "hono/cors";
import { bootstrap, GetMapping, PathVariable, RequestMapping, RestController } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { PermitAll, security } from "../../security.ts";
import { RUNTIME } from "../runtime.ts";
import { memoryLogger } from "../helpers.ts";
import { exchange, request } from "../runtime/raw_client.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

/** How many times a guarded handler ran. */
let guardedRuns = 0;

@RestController()
@RequestMapping("/admin")
class Admin {
  @GetMapping("/panel")
  panel(): string {
    guardedRuns++;
    return "SECRET panel";
  }

  @GetMapping("/users/{id}", PathVariable("id"))
  user(id: string): string {
    guardedRuns++;
    return `SECRET user ${id}`;
  }
}

@RestController()
@RequestMapping("/items")
class Items {
  // Open to anyone, but only for a number: another id goes on to the guarded route below.
  @GetMapping("/{id:\\d+}", PathVariable("id"))
  @PermitAll()
  byNumber(id: string): string {
    return `item ${id}`;
  }

  @GetMapping("/{name}", PathVariable("name"))
  byName(name: string): string {
    guardedRuns++;
    return `SECRET item ${name}`;
  }
}

@RestController()
@RequestMapping("/public")
@PermitAll()
class Public {
  @GetMapping("/{*rest}", PathVariable("rest"))
  any(rest: string): string {
    return `public ${rest}`;
  }
}

describe(`security() against guard bypasses through listen(app) on ${RUNTIME}`, () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  let server: Server;
  let port: number;

  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    const app = await bootstrap({
      controllers: [Admin, Items, Public],
      config: { security: { oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } } } },
      middleware: [cors({ origin: "https://app.example" })],
      security: security(),
      logger: memoryLogger(),
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1" });
    port = server.port;
  });
  after(async () => {
    await server.close();
    await issuer.down();
  });

  /** Sends the request and asserts that no guarded handler ran and nothing of one came back. */
  const noWayThrough = async (method: string, path: string, headers: string[] = []) => {
    const before = guardedRuns;
    const answer = await exchange(port, request(method, path, headers));
    const what = `${method} ${path}`;
    assert.equal(guardedRuns, before, `${what} ran a guarded handler`);
    assert.doesNotMatch(answer.bytes, /SECRET/, what);
    assert.notEqual(answer.status, 200, what);
    assert.ok(answer.status !== 0, `${what}: no answer`);
    return answer;
  };

  it("answers every spelling of a guarded path without its handler", async () => {
    const paths = [
      "/admin/panel",
      "/admin/panel/",
      "//admin/panel",
      "/admin//panel",
      "/ADMIN/panel",
      "/Admin/Panel",
      "/admin/./panel",
      "/public/../admin/panel",
      "/public/%2e%2e/admin/panel",
      "/public/%2E%2E/admin/panel",
      "/public/.%2e/admin/panel",
      "/admin%2Fpanel",
      "/admin%2fpanel",
      "/public%2F..%2Fadmin/panel",
      "/admin/panel%2F",
      "/admin/panel?x=/public/a",
      "/admin/panel;/public",
      "/admin/panel#/public",
      "/admin/users/7",
      "/admin/users/%2e%2e%2Fpanel",
      "/items/abc",
      "/items/12abc",
      "/items/%31%32x",
    ];
    for (const path of paths) {
      for (const method of ["GET", "HEAD"]) {
        const answer = await noWayThrough(method, path);
        if (answer.status === 401) {
          assert.match(answer.head, /\r\nwww-authenticate: Bearer/i, `${method} ${path}`);
        }
      }
    }
    // The ones the router takes to a guarded route are answered 401 there.
    for (
      const path of [
        "/admin/panel",
        "/public/../admin/panel",
        "/public/%2e%2e/admin/panel",
        "/items/abc",
      ]
    ) {
      assert.equal((await noWayThrough("GET", path)).status, 401, path);
    }
  });

  it("OPTIONS and a CORS preflight tell no more than Allow; the request after it is refused", async () => {
    const plain = await noWayThrough("OPTIONS", "/admin/panel");
    assert.equal(plain.body, "");
    const preflight = await noWayThrough("OPTIONS", "/admin/panel", [
      "Origin: https://app.example",
      "Access-Control-Request-Method: GET",
      "Access-Control-Request-Headers: authorization",
    ]);
    assert.equal(preflight.body, "");
    const refused = await noWayThrough("GET", "/admin/panel", ["Origin: https://app.example"]);
    assert.equal(refused.status, 401);
    // The browser may read the refusal: the CORS header set before the guard is kept.
    assert.match(refused.head, /\r\naccess-control-allow-origin: https:\/\/app\.example/i);
    // A path no route takes, or another method, is no different to an anonymous client.
    for (const [method, path] of [["GET", "/admin/nothing"], ["DELETE", "/admin/panel"]]) {
      const hidden = await noWayThrough(method, path, ["Origin: https://app.example"]);
      assert.equal(hidden.status, 401, `${method} ${path}`);
      assert.doesNotMatch(hidden.head, /\r\nallow:/i);
      assert.match(hidden.head, /\r\naccess-control-allow-origin: https:\/\/app\.example/i);
    }
  });

  it("a token the issuer did not sign, or none in another scheme, gets nowhere either", async () => {
    const forged = await token(
      { kid: "k1", alg: "HS256", privateKey: new TextEncoder().encode("x".repeat(32)) },
      { iss: issuer.url },
      Date.now(),
    );
    for (
      const header of [
        `Authorization: Bearer ${forged}`,
        "Authorization: Basic YWRtaW46YWRtaW4=",
        "Authorization: Bearer",
        "Authorization: bearer ",
        `Authorization: Bearer ${forged}\r\nAuthorization: Bearer ${forged}`,
      ]
    ) {
      await noWayThrough("GET", "/admin/panel", [header]);
    }
  });

  it("the same requests with a valid token, and the open routes without one, are served", async () => {
    const valid = await token(key, { iss: issuer.url }, Date.now());
    const served = await exchange(
      port,
      request("GET", "/admin/panel", [`Authorization: Bearer ${valid}`]),
    );
    assert.equal(served.status, 200);
    assert.equal(served.body, "SECRET panel");
    const viaDots = await exchange(
      port,
      request("GET", "/public/%2e%2e/admin/users/7", [`Authorization: Bearer ${valid}`]),
    );
    assert.equal(viaDots.body, "SECRET user 7");
    assert.equal((await exchange(port, request("GET", "/items/12"))).body, "item 12");
    assert.equal((await exchange(port, request("GET", "/public/a/b"))).body, "public /a/b");
  });
});
