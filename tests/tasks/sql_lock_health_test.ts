// integration test: PostgreSQL of tools/databases.sh (a server that is not running fails it)
// The lock provider's part of the `db` health component over real pg pools: the test database,
// a port nothing listens on, and a server that takes the connection and never answers. Each
// probe must answer, with `db` DOWN, within the health timeout.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { Bean, bootstrap, Configuration } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { SqlLockProvider } from "../../lock-sql.ts";
import { DB_PASSWORD, DB_USER, POSTGRES_URL } from "../migrate/sql/databases.ts";
import { freePort } from "../helpers.ts";

const pools: pg.Pool[] = [];

function pool(connectionString: string): pg.Pool {
  const url = new URL(connectionString);
  url.username = DB_USER;
  url.password = DB_PASSWORD;
  const made = new pg.Pool({ connectionString: url.href });
  // A connection the database drops is the pool's error event: one unheard ends the process.
  made.on("error", () => {});
  pools.push(made);
  return made;
}

/** The health body of an app whose `locks` bean is a SqlLockProvider over `db`. */
async function health(db: pg.Pool, timeout: number): Promise<{ status: number; body: unknown }> {
  @Configuration()
  class LockConfig {
    @Bean()
    locks(): SqlLockProvider {
      return SqlLockProvider.postgres(db);
    }
  }
  const app = await bootstrap({
    components: [LockConfig],
    config: {
      management: {
        endpoint: { health: { "show-details": "always" } },
        health: { timeout, diskspace: { enabled: false } },
      },
    },
    actuator: actuator(),
  });
  try {
    const response = await app.fetch(new Request("http://x/actuator/health"));
    return { status: response.status, body: await response.json() };
  } finally {
    await app.close();
  }
}

describe("the lock provider's db health component on PostgreSQL", () => {
  const sockets = new Set<Socket>();
  let silent: Server | undefined;

  after(async () => {
    for (const socket of sockets) socket.destroy();
    silent?.close();
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
  });

  it("is UP with the database while it answers SELECT 1", async () => {
    assert.deepEqual(await health(pool(POSTGRES_URL), 20_000), {
      status: 200,
      body: {
        status: "UP",
        components: { db: { status: "UP", details: { locks: { database: "PostgreSQL" } } } },
      },
    });
  });

  it("is DOWN with the driver's error when nothing listens on the database's port", async () => {
    const url = new URL(POSTGRES_URL);
    url.port = String(await freePort());
    const { status, body } = await health(pool(url.href), 20_000);
    assert.equal(status, 503);
    const db = (body as { components: { db: { status: string; details: { locks: unknown } } } })
      .components.db;
    assert.equal(db.status, "DOWN");
    assert.match(JSON.stringify(db.details.locks), /ECONNREFUSED/);
    assert.doesNotMatch(JSON.stringify(body), new RegExp(DB_PASSWORD));
  });

  it("is DOWN within the timeout when the database takes the connection and never answers", async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    silent.listen(0, "127.0.0.1");
    await new Promise((resolve) => silent!.once("listening", resolve));
    const { port } = silent.address() as { port: number };
    const url = new URL(POSTGRES_URL);
    url.port = String(port);
    assert.deepEqual(await health(pool(url.href), 500), {
      status: 503,
      body: {
        status: "DOWN",
        components: {
          db: {
            status: "DOWN",
            details: { locks: { error: "check() did not answer within 500 ms" } },
          },
        },
      },
    });
  });
});
