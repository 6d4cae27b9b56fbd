// Token relay: a route of one app calls the next service (another app, over a real socket) with
// relay(), and the next service sees the same caller, by the same token; a call without a bearer
// caller relays nothing.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { listen } from "../../server.ts";
import {
  type Authentication,
  PermitAll,
  Principal,
  relay,
  security,
  testTokens,
} from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { ServiceServer } from "./token_endpoint_server.ts";

// What a wrapper that passes its own unset option on sends (typed loosely, as most code is).
const UNSET_REDIRECT = { redirect: undefined } as unknown as RequestInit;

describe("relay", () => {
  it("sends the caller's own token to the next service, which sees the same caller", async () => {
    const tokens = await testTokens();

    @RestController()
    class Invoices {
      @GetMapping("/invoices", Principal())
      invoices(caller: Authentication): string {
        return `invoices of ${caller.name} (${caller.authorities.join(" ")})`;
      }
    }
    const next = await bootstrap({
      controllers: [Invoices],
      config: tokens.config,
      security: security(),
      logger: memoryLogger(),
    });
    const server = await listen(next, { port: 0, hostname: "127.0.0.1", quiet: true });
    const nextUrl = `http://127.0.0.1:${server.port}/invoices`;
    const [redirecting, elsewhere] = [await ServiceServer.start(), await ServiceServer.start()];
    redirecting.redirectTo = elsewhere.url;

    @RestController()
    class Orders {
      @GetMapping("/orders/invoices")
      async invoices(): Promise<string> {
        return await (await relay(nextUrl)).text();
      }

      // The status of a relay to a service that redirects elsewhere, for each kind of init.
      @GetMapping("/orders/redirected")
      async redirected(): Promise<number[]> {
        const inits = [undefined, {}, UNSET_REDIRECT, { method: "GET" }];
        return await Promise.all(inits.map(async (init) => {
          const answer = await relay(redirecting.url, init);
          await answer.body?.cancel();
          return answer.status;
        }));
      }

      @GetMapping("/open")
      @PermitAll()
      async open(): Promise<string> {
        try {
          await relay(nextUrl);
          return "relayed";
        } catch (error) {
          return (error as Error).message;
        }
      }
    }
    const app = await bootstrap({
      controllers: [Orders],
      config: tokens.config,
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const authorization = await tokens.bearer({ sub: "ann", scope: "invoices:read" });
      const answer = await app.fetch(
        new Request("http://localhost/orders/invoices", { headers: { authorization } }),
      );
      assert.equal(await answer.text(), "invoices of ann (SCOPE_invoices:read)");
      // The caller's token goes to no host but the one called.
      const redirected = await app.fetch(
        new Request("http://localhost/orders/redirected", { headers: { authorization } }),
      );
      assert.deepEqual(await redirected.json(), [302, 302, 302, 302]);
      assert.equal(elsewhere.calls.length, 0);
      // Anonymous on an open route: nothing to relay, and nothing sent.
      const open = await app.fetch(new Request("http://localhost/open"));
      assert.match(
        await open.text(),
        /relay: no bearer token to relay: the current call has no caller/,
      );
    } finally {
      await app.close();
      await server.close();
      await next.close();
      await Promise.all([redirecting.down(), elsewhere.down()]);
    }
  });
});
