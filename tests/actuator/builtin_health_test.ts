// The components Thaw adds by itself, as an app sees them at /actuator/health: the disk's, and
// those its own beans offer (here a SqlLockProvider over a query of the test's; the real
// databases and Redis are in tests/tasks/sql_lock_health_test.ts and
// tests/cache/redis_health_test.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  type Application,
  Bean,
  bootstrap,
  Configuration,
  type ConfigValues,
  type HealthCheck,
  HealthIndicator,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { SqlLockProvider, type SqlLockQuery } from "../../lock-sql.ts";
import { contributedHealth, diskSpaceHealth } from "../../src/actuator/builtin_health.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { tempDir } from "../temp_dir.ts";
import { RUNTIME, scriptCommand } from "../runtime.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const run = promisify(execFile);

const ALWAYS = { endpoint: { health: { "show-details": "always" } } };

function config(health: ConfigValues = {}, more: ConfigValues = {}): ConfigValues {
  return { management: { ...ALWAYS, health }, ...more };
}

interface Body {
  readonly status: string;
  readonly components: Record<string, { status: string; details: Record<string, unknown> }>;
}

async function healthOf(app: Application): Promise<{ status: number; body: Body }> {
  const response = await app.fetch(new Request("http://x/actuator/health"));
  return { status: response.status, body: await response.json() };
}

/** A configuration class whose `locks` bean is a SqlLockProvider over `query`. */
function lockBean(query: SqlLockQuery) {
  @Configuration()
  class LockConfig {
    @Bean()
    locks(): SqlLockProvider {
      return new SqlLockProvider({ dialect: "postgres", query });
    }
  }
  return LockConfig;
}

describe("the diskSpace component", () => {
  it("is there by default, with Spring's details of the working folder and 10 MB", async () => {
    const app = await bootstrap({ config: config(), actuator: actuator() });
    const { status, body } = await healthOf(app);
    assert.equal(status, 200);
    const disk = body.components.diskSpace;
    assert.equal(disk.status, "UP");
    assert.deepEqual(Object.keys(disk.details).sort(), [
      "exists",
      "free",
      "path",
      "threshold",
      "total",
    ]);
    assert.equal(disk.details.threshold, 10 * 1024 * 1024);
    assert.equal(disk.details.path, process.cwd());
    assert.equal(disk.details.exists, true);
  });

  it("is DOWN, and the app with it, once the free space is below the threshold", async () => {
    // More bytes than any disk has free.
    const threshold = Number.MAX_SAFE_INTEGER;
    const app = await bootstrap({
      config: config({ diskspace: { threshold } }),
      actuator: actuator(),
    });
    const { status, body } = await healthOf(app);
    assert.equal(status, 503);
    assert.equal(body.status, "DOWN");
    assert.equal(body.components.diskSpace.status, "DOWN");
    assert.equal(body.components.diskSpace.details.threshold, threshold);
  });

  it("watches the folder of management.health.diskspace.path", async () => {
    await using dir = await tempDir("thaw-disk-");
    const app = await bootstrap({
      config: config({ diskspace: { path: dir.path, threshold: "0" } }),
      actuator: actuator(),
    });
    const { body } = await healthOf(app);
    assert.equal(body.components.diskSpace.details.path, dir.path);
    assert.equal(body.components.diskSpace.details.threshold, 0);
  });

  it("is not there with management.health.diskspace.enabled: false", async () => {
    const app = await bootstrap({
      config: config({ diskspace: { enabled: false } }),
      actuator: actuator(),
    });
    assert.deepEqual((await healthOf(app)).body, { status: "UP" });
  });

  it("is not there on workerd, whose file system is memory", async () => {
    const settings = readSettings(resolveConfig({}, () => undefined));
    assert.notEqual(await diskSpaceHealth(settings), undefined);
    const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    Object.defineProperty(globalThis, "navigator", {
      value: { userAgent: "Cloudflare-Workers" },
      configurable: true,
    });
    try {
      assert.equal(await diskSpaceHealth(settings), undefined);
    } finally {
      if (had === undefined) delete (globalThis as { navigator?: unknown }).navigator;
      else Object.defineProperty(globalThis, "navigator", had);
    }
  });

  it("is left out with a warning where Deno does not allow statfs, not DOWN for good", async () => {
    // A process of its own, with the permissions of an app that never granted --allow-sys: an app
    // upgraded to a Thaw with this component must not turn unhealthy for it. Bun and Node have no
    // permissions to withhold: there the component is there.
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/disk_space_permission.ts", import.meta.url)),
      [],
      ["--allow-read", "--allow-env"],
    );
    const { stdout } = await run(command, args);
    const { status, components, warnings } = JSON.parse(stdout) as {
      status: string;
      components: string[];
      warnings: string[];
    };
    assert.equal(status, "UP");
    if (RUNTIME === "deno") {
      assert.deepEqual(components, []);
      assert.deepEqual(warnings, [
        "[thaw] the diskSpace health component is left out: Deno does not allow this app to " +
        "read the free space of a disk; grant it with --allow-sys=statfs, or say so with " +
        "management.health.diskspace.enabled: false",
      ]);
    } else {
      assert.deepEqual([components, warnings], [["diskSpace"], []]);
    }
  });

  it("refuses a threshold that is not a whole number of bytes, naming the key", async () => {
    await assert.rejects(
      bootstrap({ config: config({ diskspace: { threshold: "10MB" } }), actuator: actuator() }),
      /management\.health\.diskspace\.threshold must be an integer/,
    );
  });
});

describe("a component a bean of Thaw's offers: the lock provider's db", () => {
  const NO_DISK = { diskspace: { enabled: false } };

  it("is UP with the database under the bean's name while it answers", async () => {
    const asked: string[] = [];
    const app = await bootstrap({
      components: [lockBean((sql) => (asked.push(sql), Promise.resolve([])))],
      config: config(NO_DISK),
      actuator: actuator(),
    });
    assert.deepEqual(await healthOf(app), {
      status: 200,
      body: {
        status: "UP",
        components: { db: { status: "UP", details: { locks: { database: "PostgreSQL" } } } },
      },
    });
    assert.deepEqual(asked, ["SELECT 1"]);
  });

  it("is DOWN with the driver's error when the database fails", async () => {
    const app = await bootstrap({
      components: [lockBean(() => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1")))],
      config: config(NO_DISK),
      actuator: actuator(),
    });
    assert.deepEqual(await healthOf(app), {
      status: 503,
      body: {
        status: "DOWN",
        components: {
          db: { status: "DOWN", details: { locks: { error: "connect ECONNREFUSED 127.0.0.1:1" } } },
        },
      },
    });
  });

  it("is DOWN once the timeout passes, and a probe finds a check that still runs", async () => {
    let queries = 0;
    const app = await bootstrap({
      components: [lockBean(() => (queries++, new Promise(() => {})))],
      config: config({ ...NO_DISK, timeout: 50 }),
      actuator: actuator(),
    });
    for (let probe = 0; probe < 2; probe++) {
      assert.deepEqual(await healthOf(app), {
        status: 503,
        body: {
          status: "DOWN",
          components: {
            db: {
              status: "DOWN",
              details: { locks: { error: "check() did not answer within 50 ms" } },
            },
          },
        },
      });
    }
    // The second probe did not pile a query on the one that hangs.
    assert.equal(queries, 1);
  });

  it("joins a db indicator of the app's: one component, DOWN when either is", async () => {
    @HealthIndicator("db")
    class OwnDatabase implements HealthCheck {
      check() {
        return { database: "SQLite" };
      }
    }
    let answer: Promise<[]> = Promise.resolve([]);
    const app = await bootstrap({
      components: [OwnDatabase, lockBean(() => answer)],
      config: config(NO_DISK),
      actuator: actuator(),
    });
    assert.deepEqual((await healthOf(app)).body.components, {
      db: { status: "UP", details: { database: "SQLite", locks: { database: "PostgreSQL" } } },
    });
    answer = Promise.reject(new Error("gone"));
    answer.catch(() => {});
    assert.deepEqual((await healthOf(app)).body.components, {
      db: { status: "DOWN", details: { database: "SQLite", locks: { error: "gone" } } },
    });
  });

  it("is not there with management.health.db.enabled: false", async () => {
    let queries = 0;
    const app = await bootstrap({
      components: [lockBean(() => (queries++, Promise.resolve([])))],
      config: config({ ...NO_DISK, db: { enabled: false } }),
      actuator: actuator(),
    });
    assert.deepEqual(await healthOf(app), { status: 200, body: { status: "UP" } });
    assert.equal(queries, 0);
  });

  it("is offered once by a bean that two names hold", () => {
    const provider = new SqlLockProvider({ dialect: "sqlite", query: () => Promise.resolve([]) });
    const settings = readSettings(resolveConfig({}, () => undefined));
    const beans = ["locks", "lockProvider"].map((name) => ({
      name,
      type: undefined,
      stereotype: "bean" as const,
      instance: provider,
    }));
    const offered = contributedHealth(beans, settings);
    assert.deepEqual(offered.map((i) => [i.name, i.builtIn]), [["db", { part: "locks" }]]);
  });
});
