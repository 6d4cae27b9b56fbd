import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Application, bootstrap } from "../../mod.ts";
import { listen, type ListenOptions } from "../../server.ts";
import { Ping } from "../fixtures/entry_ping.ts";

describe("listen(app, options)", () => {
  it("rejects, as a promise, what bootstrap did not return", async () => {
    const app = await bootstrap({ controllers: [Ping] });
    for (const other of [{}, null, { fetch: app.fetch }, app.hono]) {
      // A promise that rejects, not a throw: `.catch()` sees it.
      const started = listen(other as Application);
      assert.ok(started instanceof Promise);
      await assert.rejects(
        started,
        (error: unknown) =>
          error instanceof TypeError &&
          error.message === "listen(app) takes an application that bootstrap() returned",
      );
    }
  });

  it("says so when the app comes from another copy of the package", async () => {
    const app = await bootstrap({ controllers: [Ping] });
    // What another copy's bootstrap returns has the shape, not this copy's registration.
    await assert.rejects(
      listen({ ...app }),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.includes("this one comes from another copy (npm and JSR, or two versions)"),
    );
  });

  it("refuses options that are not an object, rather than taking the default port", async () => {
    const app = await bootstrap({ controllers: [Ping], config: { server: { port: 0 } } });
    for (const options of [3000, "3000", null, [3000]]) {
      await assert.rejects(
        listen(app, options as ListenOptions),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith("listen(app, options) takes an object of options"),
        String(options),
      );
    }
  });

  it("serves on the port and address given, and closes", async () => {
    const app = await bootstrap({ controllers: [Ping] });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    assert.equal(await (await fetch(`${server.url}/ping`)).text(), "pong");
    await server.close();
  });
});
