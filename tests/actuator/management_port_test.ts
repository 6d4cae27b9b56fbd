import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { bearerAuth } from "hono/bearer-auth";
import { bootstrap, ConfigError, GetMapping, RestController } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { listen } from "../../server.ts";
import { freePort } from "../helpers.ts";

@RestController()
class OrderController {
  @GetMapping("/orders")
  list(): string {
    return "orders";
  }
}

function guardedApp(management: Record<string, unknown>, logger?: { lines: string[] }) {
  return bootstrap({
    controllers: [OrderController],
    middleware: [bearerAuth({ token: "secret" })],
    config: {
      management: {
        server: management,
        endpoints: { web: { exposure: { include: "health,mappings" } } },
      },
    },
    actuator: actuator(),
    logger: logger === undefined
      ? { error: () => {} }
      : { error: () => {}, info: (line: string) => void logger.lines.push(line) },
  });
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers });
  await res.body?.cancel();
  return res.status;
}

// Whether anything accepts a connection on the port now.
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(true));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(false)));
  });
}

describe("management.server.port", () => {
  it("serves the actuator on its own port only, open while an auth guard holds the app", async () => {
    const logged = { lines: [] as string[] };
    const app = await guardedApp({ port: 0, address: "127.0.0.1" }, logged);
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    try {
      const management = server.management;
      assert.ok(management !== undefined);
      assert.notEqual(management.port, server.port);
      assert.equal(management.url, `http://127.0.0.1:${management.port}`);
      // The main port: the app, behind its guard; no actuator there, even with the token.
      assert.equal(await status(`${server.url}/orders`), 401);
      assert.equal(await status(`${server.url}/orders`, { authorization: "Bearer secret" }), 200);
      assert.equal(
        await status(`${server.url}/actuator/health`, { authorization: "Bearer secret" }),
        404,
      );
      // The management port: the actuator, with no guard; none of the app's routes.
      assert.equal(await status(`${management.url}/actuator/health`), 200);
      assert.equal(await status(`${management.url}/actuator/health/readiness`), 200);
      const mappings = await (await fetch(`${management.url}/actuator/mappings`)).json();
      assert.deepEqual(mappings.routes.map((r: { path: string }) => r.path), ["/orders"]);
      assert.equal(await status(`${management.url}/orders`), 404);
      assert.match(
        logged.lines[0],
        new RegExp(`^Thaw listening on ${server.url} \\(actuator on ${management.url}\\) — `),
      );
    } finally {
      await server.close();
    }
    assert.equal(await accepts(server.port), false, "the main port is closed");
    assert.equal(await accepts(server.management!.port), false, "the management port is closed");
  });

  it("is refused when it is the app's own port", async () => {
    const port = await freePort();
    const app = await guardedApp({ port });
    await assert.rejects(
      listen(app, { port, hostname: "127.0.0.1", signals: false, quiet: true }),
      (e) => {
        assert.ok(e instanceof ConfigError);
        assert.match(
          e.message,
          new RegExp(`management\\.server\\.port: ${port} is the port the app listens on`),
        );
        return true;
      },
    );
    assert.equal(await accepts(port), false, "nothing was left listening");
  });

  it("leaves nothing listening when the app's port cannot be bound", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const port = await freePort();
      const app = await guardedApp({ port, address: "127.0.0.1" });
      await assert.rejects(
        listen(app, { port: taken, hostname: "127.0.0.1", signals: false, quiet: true }),
      );
      assert.equal(await accepts(port), false, "the management server was closed again");
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it("binds where listen binds the app unless management.server.address says", async () => {
    const app = await guardedApp({ port: 0 });
    const server = await listen(app, {
      port: 0,
      hostname: "127.0.0.1",
      signals: false,
      quiet: true,
    });
    try {
      assert.equal(server.management?.hostname, "127.0.0.1");
      assert.equal(await status(`${server.management!.url}/actuator/health`), 200);
    } finally {
      await server.close();
    }
  });

  it("refuses an address with no port to put it on", async () => {
    await assert.rejects(
      guardedApp({ address: "127.0.0.1" }),
      /management\.server\.address: an address for the management port, which management\.server\.port gives/,
    );
  });

  it("is refused when it is no port", async () => {
    await assert.rejects(guardedApp({ port: 70_000 }), /management\.server\.port/);
    await assert.rejects(guardedApp({ prot: 8081 }), /did you mean management\.server\.port/);
  });
});
