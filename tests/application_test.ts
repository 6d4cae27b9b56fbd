import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, type BootstrapOptions } from "../mod.ts";
import { Ping } from "./fixtures/entry_ping.ts";

describe("bootstrap options", () => {
  it("refuses scan, which moved to @thaw/thaw/scan, naming the call to make instead", async () => {
    await assert.rejects(
      bootstrap({ controllers: [Ping], scan: ["src"] } as BootstrapOptions),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message ===
          "bootstrap({ scan }): scanning needs a file system, so it lives in its own entry " +
            'point: import { scanComponents } from "@thaw/thaw/scan" and pass ' +
            "components: await scanComponents(config)",
    );
  });

  it("refuses an option it does not know, rather than ignoring it", async () => {
    for (const key of ["controler", "listen", "port", "Config", "__proto__x"]) {
      await assert.rejects(
        bootstrap({ [key]: 1 } as BootstrapOptions),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith(`bootstrap({ ${key} }): no such option; the options are `) &&
          error.message.endsWith(
            "openapi, actuator, data, search, tasks, kafka, jobs, storage, security, logging",
          ),
        key,
      );
    }
  });

  it("names the import the health option moved to", async () => {
    await assert.rejects(bootstrap({ health: true } as BootstrapOptions), {
      name: "TypeError",
      message: "bootstrap({ health }): health is the actuator's, which lives in its own entry " +
        'point: import { actuator } from "@thaw/thaw/actuator" and pass ' +
        "bootstrap({ actuator: actuator() })",
    });
  });

  it("takes every option it documents", async () => {
    const app = await bootstrap({
      controllers: [Ping],
      components: [],
      overrides: [],
      config: {},
      env: {},
      maxBodySize: 10,
      allowEncodedSlash: false,
      middleware: [],
      logger: console,
      openapi: false,
      actuator: false,
      search: false,
      kafka: false,
      security: false,
    });
    assert.equal(await (await app.fetch(new Request("http://localhost/ping"))).text(), "pong");
  });

  it("has no listen or openapi method: they live in @thaw/thaw/server and @thaw/thaw/openapi", async () => {
    const app = await bootstrap({ controllers: [Ping] });
    assert.deepEqual(Object.keys(app).sort(), [
      "close",
      "config",
      "fetch",
      "getBean",
      "hono",
      "scheduled",
      "start",
    ]);
  });
});
