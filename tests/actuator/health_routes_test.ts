import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import {
  type Application,
  Autowired,
  bootstrap,
  Component,
  ConfigError,
  type ConfigValues,
  DefinitionError,
  GetMapping,
  type HealthCheck,
  HealthIndicator,
  type MethodInterceptor,
  type MethodInvocation,
  RestController,
  UseInterceptors,
} from "../../mod.ts";
import {
  HEALTH_PATH,
  healthRoutes,
  LIVENESS_PATH,
  READINESS_PATH,
} from "../../src/actuator/health_routes.ts";
import { openApi, openApiDocument } from "../../openapi.ts";
import { actuator, type HealthOptions } from "../../actuator.ts";
import { scanComponents } from "../../scan.ts";
import { call, reach } from "../helpers.ts";
import { assertValidOpenApi, schemaValidator } from "../openapi/openapi_validator.ts";

const PATHS = [HEALTH_PATH, LIVENESS_PATH, READINESS_PATH];

@HealthIndicator("db")
class DatabaseHealth implements HealthCheck {
  check() {
    return { database: "SQLite", version: "3.46" };
  }
}

@HealthIndicator("search")
class ThrowingHealth implements HealthCheck {
  check(): never {
    throw new Error("connection refused by secret-host:9200");
  }
}

@HealthIndicator("mail")
class HangingHealth implements HealthCheck {
  check(): Promise<undefined> {
    return new Promise(() => {});
  }
}

@HealthIndicator("cache")
class NumberHealth {
  check(): number {
    return 42;
  }
}

@RestController()
class HelloController {
  @GetMapping("/hello")
  hello(): string {
    return "hello";
  }
}

/** The status, the body as text and JSON, after checking the headers every health answer has. */
async function probe(
  app: Application,
  path: string,
): Promise<{ status: number; text: string; json: unknown; headers: Headers }> {
  const response = await call(app, "GET", path);
  assert.equal(response.headers.get("content-type"), "application/json", path);
  assert.equal(response.headers.get("cache-control"), "no-store", path);
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text), headers: response.headers };
}

// The disk's component, which Thaw adds by itself, left out where a test compares every component.
const NO_DISK: ConfigValues = { management: { health: { diskspace: { enabled: false } } } };

function management(health: ConfigValues, showDetails?: string): ConfigValues {
  return {
    management: {
      health,
      ...(showDetails === undefined
        ? {}
        : { endpoint: { health: { "show-details": showDetails } } }),
    },
  };
}

describe("the health endpoints", () => {
  it("serve nothing without the actuator, or with health not exposed", async () => {
    const apps = [
      await bootstrap({ components: [DatabaseHealth] }),
      await bootstrap({ components: [DatabaseHealth], actuator: false }),
      await bootstrap({
        components: [DatabaseHealth],
        config: management({ timeout: 10 }),
        actuator: false,
      }),
      await bootstrap({
        components: [DatabaseHealth],
        config: { management: { endpoints: { web: { exposure: { include: "info" } } } } },
        actuator: actuator(),
      }),
      await bootstrap({
        components: [DatabaseHealth],
        config: { management: { endpoints: { web: { exposure: { exclude: ["health"] } } } } },
        actuator: actuator(),
      }),
    ];
    for (const app of apps) {
      for (const path of PATHS) {
        const response = await call(app, "GET", path);
        assert.equal(response.status, 404, path);
        await response.body?.cancel();
      }
    }
  });

  it("answer UP with the status alone by default, and the probes UP", async () => {
    const app = await bootstrap({ components: [DatabaseHealth], actuator: actuator() });
    for (const path of PATHS) {
      const { status, text } = await probe(app, path);
      assert.equal(status, 200, path);
      assert.equal(text, `{"status":"UP"}`, path);
    }
  });

  it("show every component and its details with show-details always", async () => {
    const app = await bootstrap({
      components: [ThrowingHealth, DatabaseHealth],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const { status, json } = await probe(app, HEALTH_PATH);
    assert.equal(status, 503);
    assert.deepEqual(json, {
      status: "DOWN",
      components: {
        db: { status: "UP", details: { database: "SQLite", version: "3.46" } },
        search: {
          status: "DOWN",
          details: { error: "connection refused by secret-host:9200" },
        },
      },
    });
    // The probes say nothing of the components.
    assert.deepEqual((await probe(app, LIVENESS_PATH)).json, { status: "UP" });
    assert.deepEqual((await probe(app, READINESS_PATH)).json, { status: "UP" });
  });

  it("mask with show-details always the secrets info masks, in details and errors", async () => {
    @HealthIndicator("store")
    class StoreHealth implements HealthCheck {
      check() {
        return {
          url: "postgres://app:hunter2pw@db:5432/shop?sslmode=require&password=qs-secret",
          password: "details-pw",
          pool: { apiKey: 1234567, size: 10 },
          banner: "connected with configured-s3cret",
        };
      }
    }
    @HealthIndicator("broker")
    class BrokerHealth implements HealthCheck {
      check(): never {
        throw Object.assign(
          new Error(
            "cannot reach amqp://guest:guestpw@broker:5672/ with configured-s3cret: " +
              "client password=raw-pw",
          ),
          { password: "never-shown" },
        );
      }
    }
    const app = await bootstrap({
      components: [StoreHealth, BrokerHealth],
      config: { ...NO_DISK, shop: { password: "configured-s3cret" } },
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const { status, json, text } = await probe(app, HEALTH_PATH);
    assert.equal(status, 503);
    assert.deepEqual(json, {
      status: "DOWN",
      components: {
        broker: {
          status: "DOWN",
          details: { error: "cannot reach amqp://***@broker:5672/ with ***: client password=***" },
        },
        store: {
          status: "UP",
          details: {
            url: "postgres://***@db:5432/shop?sslmode=require&password=***",
            password: "***",
            pool: { apiKey: "***", size: 10 },
            banner: "connected with ***",
          },
        },
      },
    });
    for (
      const secret of ["hunter2pw", "qs-secret", "details-pw", "1234567", "configured-s3cret"]
    ) {
      assert.ok(!text.includes(secret), secret);
    }
    for (const secret of ["guestpw", "raw-pw"]) assert.ok(!text.includes(secret), secret);
  });

  it("answer DOWN for an indicator that throws, and leak nothing of it with show-details never", async () => {
    const app = await bootstrap({
      components: [DatabaseHealth, ThrowingHealth],
      actuator: actuator(),
    });
    const response = await call(app, "GET", HEALTH_PATH);
    assert.equal(response.status, 503);
    assert.equal(await response.text(), `{"status":"DOWN"}`);
    response.headers.forEach((value, name) => {
      for (const secret of ["secret-host", "search", "SQLite", "db"]) {
        assert.ok(!value.includes(secret) && !name.includes(secret), `${name}: ${value}`);
      }
    });
  });

  it("answer DOWN for an indicator that hangs, within the timeout, naming it", async () => {
    const app = await bootstrap({
      components: [HangingHealth, DatabaseHealth],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always", timeout: 1 } }),
    });
    const { status, json } = await probe(app, HEALTH_PATH);
    assert.equal(status, 503);
    assert.deepEqual(json, {
      status: "DOWN",
      components: {
        db: { status: "UP", details: { database: "SQLite", version: "3.46" } },
        mail: { status: "DOWN", details: { error: "check() did not answer within 1 ms" } },
      },
    });
  });

  it("answer DOWN for an indicator that answers a number, naming it", async () => {
    const app = await bootstrap({
      components: [NumberHealth],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const { status, json } = await probe(app, HEALTH_PATH);
    assert.equal(status, 503);
    assert.deepEqual(json, {
      status: "DOWN",
      components: {
        cache: {
          status: "DOWN",
          details: {
            error: "check() answered 42; answer nothing or a plain object for UP, false for DOWN",
          },
        },
      },
    });
  });

  it("run every check of a probe at once", async () => {
    // Each check waits until both have started: run one after the other, the first would wait
    // until its timeout and answer DOWN.
    let started = 0;
    let bothStarted!: () => void;
    const together = new Promise<void>((resolve) => bothStarted = resolve);
    const meet = async () => {
      if (++started === 2) bothStarted();
      await together;
      return { started };
    };
    @HealthIndicator("left")
    class Left {
      check() {
        return meet();
      }
    }
    @HealthIndicator("right")
    class Right {
      check() {
        return meet();
      }
    }
    const app = await bootstrap({
      components: [Left, Right],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const { status, json } = await probe(app, HEALTH_PATH);
    assert.deepEqual(json, {
      status: "UP",
      components: {
        left: { status: "UP", details: { started: 2 } },
        right: { status: "UP", details: { started: 2 } },
      },
    });
    assert.equal(status, 200);
  });

  it("answer readiness DOWN once the app stops taking traffic; liveness stays UP", async () => {
    let accepting = true;
    const { routes } = healthRoutes(
      [],
      { showDetails: "never", timeout: 5000 },
      () => accepting,
      (value) => value,
    );
    const handler = (path: string) => {
      const route = routes.find((r) => r.pattern.source === path);
      assert.ok(route !== undefined, path);
      return async () => await route.handler({} as Context);
    };
    const readiness = handler(READINESS_PATH);
    const liveness = handler(LIVENESS_PATH);
    const up = await readiness();
    assert.equal(up.status, 200);
    assert.deepEqual(await up.json(), { status: "UP" });
    accepting = false;
    const down = await readiness();
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("cache-control"), "no-store");
    assert.equal(down.headers.get("content-type"), "application/json");
    assert.equal(await down.text(), `{"status":"DOWN"}`);
    const live = await liveness();
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: "UP" });
  });

  it("read the management keys, and the option wins", async () => {
    const config = management({ timeout: 1, diskspace: { enabled: false } }, "always");
    const components = [DatabaseHealth, HangingHealth];
    const fromFile = await bootstrap({ components, config, actuator: actuator() });
    assert.deepEqual((await probe(fromFile, HEALTH_PATH)).json, {
      status: "DOWN",
      components: {
        db: { status: "UP", details: { database: "SQLite", version: "3.46" } },
        mail: { status: "DOWN", details: { error: "check() did not answer within 1 ms" } },
      },
    });
    const never = await bootstrap({
      components,
      config,
      actuator: actuator({ health: { showDetails: "never" } }),
    });
    assert.equal((await probe(never, HEALTH_PATH)).text, `{"status":"DOWN"}`);
  });

  it("refuse settings of the wrong kind at startup", async () => {
    assert.throws(
      () => actuator({ health: null as unknown as HealthOptions }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /actuator\(\) option health: the options must be an object/.test(error.message),
    );
    await assert.rejects(
      bootstrap({ config: management({}, "when-authorized"), actuator: actuator() }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes("management.endpoint.health.show-details must be always or never"),
    );
    await assert.rejects(
      bootstrap({ config: management({ enabled: true }), actuator: actuator() }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes("management.health.enabled: Thaw no longer reads this key"),
    );
  });

  it("take HEAD, and answer another method 405", async () => {
    const app = await bootstrap({ actuator: actuator() });
    const head = await call(app, "HEAD", HEALTH_PATH);
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    const post = await call(app, "POST", READINESS_PATH);
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    await post.body?.cancel();
  });

  it("run inside the global middleware, keeping their own Cache-Control", async () => {
    const tag = async (c: Context, next: Next) => {
      c.header("cache-control", "public, max-age=60");
      c.header("x-seen", "yes");
      await next();
    };
    const guard = async (c: Context, next: Next) => {
      if (c.req.header("authorization") !== "Bearer ok") return c.json({ error: "no" }, 401);
      await next();
    };
    const app = await bootstrap({ actuator: actuator(), middleware: [tag, guard] });
    const refused = await call(app, "GET", HEALTH_PATH);
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const allowed = await call(app, "GET", HEALTH_PATH, {
      headers: { authorization: "Bearer ok" },
    });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get("x-seen"), "yes");
    assert.equal(allowed.headers.get("cache-control"), "no-store");
    assert.deepEqual(await allowed.json(), { status: "UP" });
  });
});

describe("health indicators at startup", () => {
  it("refuse two indicators of one name, naming both classes, with health on or off", async () => {
    @HealthIndicator("db")
    class PrimaryDatabase {
      check() {}
    }
    @HealthIndicator("db")
    class ReplicaDatabase {
      check() {}
    }
    for (const served of [actuator(), false as const]) {
      await assert.rejects(
        bootstrap({ components: [PrimaryDatabase, ReplicaDatabase], actuator: served }),
        (error: unknown) =>
          error instanceof DefinitionError &&
          error.message.includes(
            `Two health indicators are named "db": PrimaryDatabase and ReplicaDatabase`,
          ),
      );
    }
  });

  it("find indicators by scanning, as any bean", async () => {
    const app = await bootstrap({
      components: await scanComponents([new URL("../fixtures/health_scan/", import.meta.url)]),
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    assert.deepEqual((await probe(app, HEALTH_PATH)).json, {
      status: "UP",
      components: { disk: { status: "UP", details: { free: 512 } } },
    });
  });

  it("ask the check() of an override that stands in for the only indicator", async () => {
    const app = await bootstrap({
      components: [DatabaseHealth],
      overrides: [[DatabaseHealth, { check: () => false }]],
      actuator: actuator(),
    });
    assert.equal((await probe(app, HEALTH_PATH)).status, 503);
  });

  it("refuse an indicator without check()", async () => {
    @HealthIndicator("nothing")
    class NoCheck {}
    await assert.rejects(
      bootstrap({ components: [NoCheck], actuator: actuator() }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes(`@HealthIndicator("nothing") on NoCheck: the class has no check()`),
    );
  });

  it("refuse a name that is not letters, digits, _ or -", () => {
    for (const name of ["", "a b", "db/primary", "é", 7 as unknown as string]) {
      assert.throws(
        () => HealthIndicator(name),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith("@HealthIndicator: the name must be letters, digits, _ or -"),
        String(name),
      );
    }
  });

  it("refuse a controller route on a health path, naming both; without health it is the app's", async () => {
    @RestController()
    class OwnHealth {
      @GetMapping("/actuator/health")
      mine(): string {
        return "mine";
      }
    }
    await assert.rejects(
      bootstrap({ controllers: [OwnHealth], actuator: actuator() }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message.includes("Two handlers for GET /actuator/health") &&
        error.message.includes("OwnHealth.mine (GET /actuator/health)") &&
        error.message.includes("the actuator's health endpoint"),
    );
    const app = await bootstrap({ controllers: [OwnHealth] });
    assert.equal(await (await call(app, "GET", HEALTH_PATH)).text(), "mine");
  });

  it("ask a check() that answers at once through an async interceptor of its class", async () => {
    // The docs' timing interceptor, on every method of the class: Thaw awaits what check()
    // answers, so a promise around its value is no one's `if` to fool.
    @Component()
    class Timing implements MethodInterceptor {
      readonly timed: string[] = [];
      async intercept(invocation: MethodInvocation, next: () => unknown): Promise<unknown> {
        try {
          return await next();
        } finally {
          this.timed.push(invocation.method);
        }
      }
    }
    @HealthIndicator("disk")
    @UseInterceptors(Timing)
    class DiskHealth implements HealthCheck {
      free = 10;
      check(): { free: number } | false {
        return this.free > 0 ? { free: this.free } : false;
      }
    }
    const app = await bootstrap({
      components: [Timing, DiskHealth],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const up = await call(app, "GET", HEALTH_PATH);
    assert.deepEqual(await up.json(), {
      status: "UP",
      components: { disk: { status: "UP", details: { free: 10 } } },
    });
    app.getBean(DiskHealth).free = 0;
    const down = await call(app, "GET", HEALTH_PATH);
    assert.equal(down.status, 503);
    assert.deepEqual(await down.json(), {
      status: "DOWN",
      components: { disk: { status: "DOWN" } },
    });
    assert.deepEqual(app.getBean(Timing).timed, ["check", "check"]);
    await app.close();
  });
});

describe("the health endpoints in the OpenAPI document", () => {
  it("are listed only when served, with their answers and the body's schema", async () => {
    const without = await bootstrap({
      controllers: [HelloController],
      components: [DatabaseHealth],
      openapi: openApi({ docs: false }),
    });
    const plain = await openApiDocument(without);
    assert.deepEqual(Object.keys(plain.paths), ["/hello"]);
    assert.ok(!(plain.tags ?? []).some((t) => t.name === "Actuator"));
    assert.ok(!Object.hasOwn(plain.components.schemas, "Health"));

    const app = await bootstrap({
      controllers: [HelloController],
      components: [DatabaseHealth, ThrowingHealth],
      actuator: actuator({ health: { showDetails: "always" } }),
      openapi: openApi({ docs: false }),
    });
    const doc = await openApiDocument(app);
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths), ["/hello", ...PATHS]);
    assert.deepEqual(
      PATHS.map((path) => Object.keys(doc.paths[path].get.responses as object)),
      [["200", "503"], ["200"], ["200", "503"]],
    );
    assert.ok((doc.tags ?? []).some((t) => t.name === "Actuator"));
    // The document served is the one openApiDocument(app) returns.
    const served = await call(app, "GET", "/openapi.json");
    assert.deepEqual(await served.json(), JSON.parse(JSON.stringify(doc)));

    // Real answers fit the schema their status declares.
    const validate = schemaValidator(doc);
    const schemaOf = (path: string, status: number) =>
      (doc.paths[path].get.responses as Record<string, Record<string, unknown>>)[String(status)]
        .content as Record<string, { schema: unknown }>;
    for (const path of PATHS) {
      const { status, json } = await probe(app, path);
      const result = validate(schemaOf(path, status)["application/json"].schema, json);
      assert.ok(result.valid, `${path} ${status}: ${JSON.stringify(result.errors)}`);
    }
    // And the schema is not one that takes anything.
    const loose = validate(schemaOf(HEALTH_PATH, 200)["application/json"].schema, {
      status: "SIDEWAYS",
    });
    assert.equal(loose.valid, false);
  });
});

describe("the health endpoint over a real socket", () => {
  it("answers with an indicator that uses an injected bean", async () => {
    @Component()
    class Ticker {
      count(): Promise<number> {
        return Promise.resolve(3);
      }
    }
    @HealthIndicator("ticker")
    class TickerHealth implements HealthCheck {
      @Autowired(Ticker)
      private ticker!: Ticker;

      async check() {
        return { ticks: await this.ticker.count() };
      }
    }
    const app = await bootstrap({
      components: [Ticker, TickerHealth],
      config: NO_DISK,
      actuator: actuator({ health: { showDetails: "always" } }),
    });
    const client = await reach(app, "socket");
    try {
      const response = await client.send("GET", HEALTH_PATH);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "application/json");
      assert.equal(response.headers.get("cache-control"), "no-store");
      assert.deepEqual(await response.json(), {
        status: "UP",
        components: { ticker: { status: "UP", details: { ticks: 3 } } },
      });
    } finally {
      await client.close();
    }
  });
});
