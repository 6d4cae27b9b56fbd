// Every way around a guard the web hardening suites try, against the routes security() guards in
// tests/fixtures/guarded_app.ts, as raw HTTP/1.1 bytes over a real socket: other methods (HEAD,
// OPTIONS, a CORS preflight), a trailing or a doubled slash, dot segments plain and
// percent-encoded, an encoded slash, another case, `;`, and a request one route's regex turns away
// to the next route. The guard belongs to the route the router picked, so none of them reaches a
// guarded handler without a token. One list for every server of the app (listen(app) on each
// runtime, workerd), so that they cannot drift apart.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Answer, exchange, request } from "../runtime/raw_client.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

/** The guarded app served for the suite: its port, and how to stop it. */
export interface GuardedServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Every spelling of a guarded path the suite tries, with GET and HEAD. */
export const GUARDED_SPELLINGS: readonly string[] = [
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
  // listen(app) refuses a `#` in the request line (400, on each runtime); workerd takes the rest
  // for a fragment and routes /admin/panel, which answers 401: either way, no handler.
  "/admin/panel#/public",
  "/admin/users/7",
  "/admin/users/%2e%2e%2Fpanel",
  "/items/abc",
  "/items/12abc",
  "/items/%31%32x",
];

/** The spellings the router takes to a guarded route, which must be answered 401 there. */
export const ROUTED_TO_GUARD: readonly string[] = [
  "/admin/panel",
  "/public/../admin/panel",
  "/public/%2e%2e/admin/panel",
  "/items/abc",
];

/**
 * Registers the suite `title`: starts an issuer on loopback, serves the guarded app trusting it
 * with `serve`, and sends every try over a real socket to the port it answers on.
 */
export function guardBypassSuite(
  title: string,
  serve: (issuer: IssuerServer) => Promise<GuardedServer>,
): void {
  describe(title, () => {
    let key: SigningKey;
    let issuer: IssuerServer;
    let server: GuardedServer;

    before(async () => {
      key = await signingKey("k1");
      issuer = await IssuerServer.start([key]);
      server = await serve(issuer);
    });
    after(async () => {
      await server?.close();
      await issuer?.down();
    });

    const send = (method: string, path: string, headers: string[] = []): Promise<Answer> =>
      exchange(server.port, request(method, path, headers));

    /** How often a guarded handler ran, as the app counts (on workerd, in its isolate). */
    const guardedRuns = async (): Promise<number> => {
      const answer = await send("GET", "/runs");
      assert.equal(answer.status, 200, answer.bytes);
      return JSON.parse(answer.body).guarded;
    };

    /** Sends the request and asserts that no guarded handler ran and nothing of one came back. */
    const noWayThrough = async (method: string, path: string, headers: string[] = []) => {
      const before = await guardedRuns();
      const answer = await send(method, path, headers);
      const what = `${method} ${path}`;
      assert.equal(await guardedRuns(), before, `${what} ran a guarded handler`);
      assert.doesNotMatch(answer.bytes, /SECRET/, what);
      assert.notEqual(answer.status, 200, what);
      assert.ok(answer.status !== 0, `${what}: no answer`);
      if (answer.status === 401) {
        assert.match(answer.head, /\r\nwww-authenticate: Bearer/i, what);
      }
      return answer;
    };

    it("answers every spelling of a guarded path without its handler", async () => {
      for (const path of GUARDED_SPELLINGS) {
        for (const method of ["GET", "HEAD"]) await noWayThrough(method, path);
      }
      for (const path of ROUTED_TO_GUARD) {
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
      // An open route checks the credentials a request carries: a forged token is refused there.
      for (const path of ["/items/12", "/public/a/b"]) {
        const refused = await send("GET", path, [`Authorization: Bearer ${forged}`]);
        assert.equal(refused.status, 401, path);
        assert.match(
          refused.head,
          /\r\nwww-authenticate: Bearer [^\r]*error="invalid_token"/i,
          path,
        );
      }
    });

    it("the same requests with a valid token, and the open routes without one, are served", async () => {
      const valid = await token(key, { iss: issuer.url }, Date.now());
      const before = await guardedRuns();
      const served = await send("GET", "/admin/panel", [`Authorization: Bearer ${valid}`]);
      assert.equal(served.status, 200, served.bytes);
      assert.equal(served.body, "SECRET panel");
      const viaDots = await send("GET", "/public/%2e%2e/admin/users/7", [
        `Authorization: Bearer ${valid}`,
      ]);
      assert.equal(viaDots.body, "SECRET user 7");
      // The count the other cases read does count the handlers' runs.
      assert.equal(await guardedRuns(), before + 2);
      assert.equal((await send("GET", "/items/12")).body, "item 12");
      assert.equal((await send("GET", "/public/a/b")).body, "public /a/b");
    });
  });
}
