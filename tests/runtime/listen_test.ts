import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Application, bootstrap } from "../../mod.ts";
import { listen, type ListenOptions } from "../../server.ts";
import { Ping } from "../fixtures/entry_ping.ts";
import { actuator } from "../../actuator.ts";

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
          error.message.startsWith("listen(app, options): the options must be an object, got ") &&
          error.message.endsWith("; listen(app, { port: 8080 })"),
        String(options),
      );
    }
  });

  it("says where it listens, what it serves and how long it took, in one line to logger.info", async () => {
    const lines: string[] = [];
    const logger = {
      // A method that needs its `this`, as pino's and winston's do.
      prefix: "info:",
      info(this: { prefix: string }, message: string) {
        lines.push(`${this.prefix} ${message}`);
      },
      error: () => {},
    };
    const app = await bootstrap({ controllers: [Ping], logger, actuator: actuator() });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    try {
      assert.equal(lines.length, 1, JSON.stringify(lines));
      // Ping's two routes, and the three health routes.
      assert.match(
        lines[0],
        new RegExp(
          `^info: Thaw listening on http://127\\.0\\.0\\.1:${server.port} — 1 controller, ` +
            "6 routes, started in \\d+ ms$",
        ),
      );
    } finally {
      await server.close();
    }
    // And one line once it has stopped: the beans closed, the port free.
    assert.equal(lines.length, 2, JSON.stringify(lines));
    assert.match(
      lines[1],
      new RegExp(
        `^info: Thaw stopped listening on http://127\\.0\\.0\\.1:${server.port}, shut down ` +
          "in \\d+ ms$",
      ),
    );
  });

  it("serves, and returns the server, when the logger's info throws", async () => {
    const logger = {
      info: () => {
        throw new Error("the log sink is down");
      },
      error: () => {},
    };
    const app = await bootstrap({ controllers: [Ping], logger });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    try {
      assert.equal(await (await fetch(`${server.url}/ping`)).text(), "pong");
    } finally {
      await server.close();
    }
  });

  it("prints no start or stop line with quiet: true, or with a logger that has no info", async () => {
    const lines: unknown[] = [];
    const withInfo = { info: (m: string) => void lines.push(m), error: () => {} };
    const quiet = await listen(await bootstrap({ controllers: [Ping], logger: withInfo }), {
      port: 0,
      hostname: "127.0.0.1",
      signals: false,
      quiet: true,
    });
    await quiet.close();
    const errorOnly = { error: (m: string) => void lines.push(m) };
    const silent = await listen(await bootstrap({ controllers: [Ping], logger: errorOnly }), {
      port: 0,
      hostname: "127.0.0.1",
      signals: false,
    });
    await silent.close();
    assert.deepEqual(lines, []);
  });

  it("prints the start line to console.info by default, naming the address bound: every interface", async () => {
    const printed: unknown[][] = [];
    const info = console.info;
    console.info = (...args: unknown[]) => void printed.push(args);
    let server;
    try {
      server = await listen(await bootstrap({ controllers: [Ping] }), { port: 0, signals: false });
    } finally {
      console.info = info;
    }
    try {
      assert.equal(printed.length, 1);
      assert.match(
        String(printed[0][0]),
        new RegExp(
          `^Thaw listening on http://0\\.0\\.0\\.0:${server.port} \\(every IPv4 interface\\) — ` +
            "1 controller, 2 routes, ",
        ),
      );
    } finally {
      await server.close();
    }
  });

  it("serves on the port and address given, and closes", async () => {
    const app = await bootstrap({ controllers: [Ping] });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    assert.equal(await (await fetch(`${server.url}/ping`)).text(), "pong");
    await server.close();
  });
});
