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

    @RestController()
    class Orders {
      @GetMapping("/orders/invoices")
      async invoices(): Promise<string> {
        return await (await relay(nextUrl)).text();
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
    }
  });
});
