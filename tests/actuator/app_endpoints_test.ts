import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bearerAuth } from "hono/bearer-auth";
import { bootstrap } from "../../mod.ts";
import {
  actuator,
  DeleteOperation,
  Endpoint,
  ReadOperation,
  Selector,
  WriteOperation,
} from "../../actuator.ts";
import { openApi, openApiDocument } from "../../openapi.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";
import { memoryLogger } from "../helpers.ts";

@Endpoint("features")
class Features {
  readonly flags = new Map<string, boolean>([["dark", true]]);

  @ReadOperation()
  all() {
    return Object.fromEntries(this.flags);
  }

  @ReadOperation()
  @Selector("name")
  one(name: string) {
    const on = this.flags.get(name);
    return on === undefined ? undefined : { name, enabled: on };
  }

  @WriteOperation()
  @Selector("name")
  set(name: string, body: { enabled?: unknown }) {
    this.flags.set(name, body.enabled === true);
  }

  @WriteOperation()
  reset(body: { to?: unknown }) {
    this.flags.clear();
    return { cleared: true, to: body.to ?? null };
  }

  @DeleteOperation()
  @Selector("name")
  drop(name: string) {
    this.flags.delete(name);
  }
}

function exposing(include: string, rest: ConfigValues = {}): ConfigValues {
  return { ...rest, management: { endpoints: { web: { exposure: { include } } } } };
}

type App = { fetch(r: Request): Response | Promise<Response> };

async function call(app: App, method: string, path: string, body?: string, type?: string) {
  const headers: Record<string, string> = type === undefined ? {} : { "content-type": type };
  const res = await app.fetch(
    new Request(`http://localhost${path}`, { method, body: body ?? null, headers }),
  );
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) };
}

describe("an app's own @Endpoint", () => {
  it("reads, writes and deletes at /actuator/<id> and /actuator/<id>/{selector}", async () => {
    const app = await bootstrap({
      components: [Features],
      config: exposing("health,features"),
      actuator: actuator(),
    });
    assert.deepEqual(await call(app, "GET", "/actuator/features"), {
      status: 200,
      body: { dark: true },
    });
    assert.deepEqual(await call(app, "GET", "/actuator/features/dark"), {
      status: 200,
      body: { name: "dark", enabled: true },
    });
    // A read that answers nothing is a 404, as Spring Boot's.
    assert.deepEqual(await call(app, "GET", "/actuator/features/beta"), {
      status: 404,
      body: undefined,
    });
    const json = "application/json";
    // A write that answers nothing is a 204; its JSON body's fields are the method's object.
    assert.deepEqual(
      await call(app, "POST", "/actuator/features/beta", '{"enabled":true}', json),
      { status: 204, body: undefined },
    );
    assert.deepEqual(await call(app, "GET", "/actuator/features/beta"), {
      status: 200,
      body: { name: "beta", enabled: true },
    });
    assert.deepEqual(
      await call(app, "POST", "/actuator/features/beta", "enabled=1", "text/plain"),
      {
        status: 415,
        body: { error: "send the body as application/json" },
      },
    );
    // An empty form (no preflight from a browser) is refused as any body that is not JSON.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      assert.equal((await call(app, "POST", "/actuator/features/beta", "", type)).status, 415);
    }
    assert.deepEqual(await call(app, "POST", "/actuator/features/beta", "[1]", json), {
      status: 400,
      body: { error: "the body must be a JSON object" },
    });
    assert.deepEqual(await call(app, "DELETE", "/actuator/features/dark"), {
      status: 204,
      body: undefined,
    });
    assert.deepEqual(await call(app, "GET", "/actuator/features"), {
      status: 200,
      body: { beta: true },
    });
    // No body is an empty object.
    assert.deepEqual(await call(app, "POST", "/actuator/features"), {
      status: 200,
      body: { cleared: true, to: null },
    });
    const index = await call(app, "GET", "/actuator");
    assert.deepEqual(Object.keys(index.body._links), [
      "self",
      "health",
      "features",
      "features-name",
    ]);
    await app.close();
  });

  it("lists a templated link for each selector route in the index, as Spring Boot does", async () => {
    const app = await bootstrap({
      components: [Features],
      config: exposing("features,env"),
      actuator: actuator(),
    });
    const { _links } = (await call(app, "GET", "/actuator")).body;
    assert.deepEqual(_links.features, { href: "http://localhost/actuator/features" });
    assert.deepEqual(_links["features-name"], {
      href: "http://localhost/actuator/features/{name}",
      templated: true,
    });
    // Thaw's own selector routes are listed by the same rule, under Spring Boot's names.
    assert.deepEqual(_links["env-toMatch"], {
      href: "http://localhost/actuator/env/{toMatch}",
      templated: true,
    });
    await app.close();
  });

  it("answers an iterable as a JSON array, and bytes as application/octet-stream", async () => {
    @Endpoint("dump")
    class Dump {
      @ReadOperation()
      async *lines(): AsyncGenerator<{ n: number }> {
        for (let n = 1; n <= 3; n++) yield await Promise.resolve({ n });
      }

      @ReadOperation()
      @Selector("name")
      bytes(name: string): Uint8Array | Blob {
        return name === "blob" ? new Blob([new Uint8Array([7])]) : new Uint8Array([0, 1, 255]);
      }

      @WriteOperation()
      stream(_body: object): ReadableStream<Uint8Array> {
        return new Blob([new Uint8Array([8, 9])]).stream();
      }

      @DeleteOperation()
      dropped(): Set<string> {
        return new Set(["a", "b"]);
      }
    }
    const app = await bootstrap({
      components: [Dump],
      config: exposing("dump"),
      actuator: actuator(),
    });
    assert.deepEqual(await call(app, "GET", "/actuator/dump"), {
      status: 200,
      body: [{ n: 1 }, { n: 2 }, { n: 3 }],
    });
    assert.deepEqual(await call(app, "DELETE", "/actuator/dump"), {
      status: 200,
      body: ["a", "b"],
    });
    for (
      const [method, path, bytes] of [
        ["GET", "/some", [0, 1, 255]],
        ["GET", "/blob", [7]],
        ["POST", "", [8, 9]],
      ] as const
    ) {
      const res = await app.fetch(new Request(`http://localhost/actuator/dump${path}`, { method }));
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("content-type"), "application/octet-stream", path);
      assert.deepEqual([...new Uint8Array(await res.arrayBuffer())], bytes, path);
    }
    await app.close();
  });

  it("stops reading an iterable past 10,000 items, with a 500 naming the method", async () => {
    @Endpoint("ticks")
    class Ticks {
      read = 0;
      closed = false;

      @ReadOperation()
      async *all(): AsyncGenerator<number> {
        try {
          for (;;) yield ++this.read;
        } finally {
          this.closed = true;
        }
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({
      components: [Ticks],
      config: exposing("ticks"),
      actuator: actuator(),
      logger,
    });
    assert.equal((await call(app, "GET", "/actuator/ticks")).status, 500);
    const ticks = app.getBean(Ticks);
    assert.equal(ticks.read, 10_001);
    assert.equal(ticks.closed, true);
    const logged = logger.lines.map((line) => line.map(String).join(" ")).join("\n");
    assert.match(
      logged,
      /Ticks\.all\(\): @ReadOperation answered an iterable of more than 10000 items/,
    );
    await app.close();
  });

  it("binds the query parameters an operation names: a missing one is a 400", async () => {
    @Endpoint("audit")
    class Audit {
      @ReadOperation({ query: ["level", "since?"] })
      @Selector("who")
      events(who: string, level: string, since?: string) {
        return { who, level, since: since ?? null };
      }

      @DeleteOperation({ query: ["before"] })
      purge(before: string) {
        return { purged: before };
      }
    }
    const app = await bootstrap({
      components: [Audit],
      config: exposing("audit"),
      actuator: actuator(),
    });
    assert.deepEqual(await call(app, "GET", "/actuator/audit/ada?level=warn&level=info"), {
      status: 200,
      body: { who: "ada", level: "warn", since: null },
    });
    assert.deepEqual(await call(app, "GET", "/actuator/audit/ada?since=2024&level=a%20b"), {
      status: 200,
      body: { who: "ada", level: "a b", since: "2024" },
    });
    assert.deepEqual(await call(app, "GET", "/actuator/audit/ada?since=2024"), {
      status: 400,
      body: { error: "missing query parameter level" },
    });
    assert.deepEqual(await call(app, "DELETE", "/actuator/audit"), {
      status: 400,
      body: { error: "missing query parameter before" },
    });
    assert.deepEqual(await call(app, "DELETE", "/actuator/audit?before=2020"), {
      status: 200,
      body: { purged: "2020" },
    });
    await app.close();
  });

  it("stops bootstrap for a parameter nothing gives a value, naming the method", async () => {
    @Endpoint("lost")
    class LostRead {
      @ReadOperation()
      @Selector("name")
      one(name: string, limit: string) {
        return { name, limit };
      }
    }
    @Endpoint("lost")
    class LostWrite {
      @WriteOperation()
      set(body: object, extra: string) {
        return { body, extra };
      }
    }
    @Endpoint("lost")
    class Clash {
      @ReadOperation({ query: ["name"] })
      @Selector("name")
      one(name: string, again: string) {
        return { name, again };
      }
    }
    for (
      const [type, message] of [
        [
          LostRead,
          "LostRead.one() takes 2 parameters, and its @Selector names and query parameters give 1: " +
          "name the others in @ReadOperation({ query: [...] })",
        ],
        [
          LostWrite,
          "LostWrite.set() takes 2 parameters, and its @Selector names and its body give 1: " +
          "a write takes its values from its JSON body",
        ],
        [Clash, 'Clash.one(): "name" is both a @Selector name and a query parameter'],
      ] as const
    ) {
      await assert.rejects(
        bootstrap({ components: [type], config: exposing("lost"), actuator: actuator() }),
        (error: Error) => {
          assert.equal(error.name, "DefinitionError");
          assert.ok(error.message.endsWith(message), error.message);
          assert.match(error.message, /^@Endpoint\("lost"\) on bean "\w+" \(class \w+\): /);
          return true;
        },
      );
    }
  });

  it("is exposed as Thaw's own are: by its id or *, and excluded", async () => {
    for (
      const [include, exclude, status] of [
        ["health", "", 404],
        ["*", "", 200],
        ["*", "features", 404],
        ["FEATURES", "", 200],
      ] as const
    ) {
      const app = await bootstrap({
        components: [Features],
        config: {
          management: { endpoints: { web: { exposure: { include, exclude } } } },
        },
        actuator: actuator(),
      });
      assert.equal((await call(app, "GET", "/actuator/features")).status, status, include);
      await app.close();
    }
    // Without the actuator, the bean is a bean, and no route.
    const bare = await bootstrap({ components: [Features] });
    assert.equal((await call(bare, "GET", "/actuator/features")).status, 404);
    await bare.close();
  });

  it("is secured as Thaw's own are: behind the app's middleware", async () => {
    const app = await bootstrap({
      components: [Features],
      config: exposing("features"),
      middleware: [bearerAuth({ token: "secret" })],
      actuator: actuator(),
    });
    assert.equal((await call(app, "GET", "/actuator/features")).status, 401);
    assert.equal((await call(app, "DELETE", "/actuator/features/dark")).status, 401);
    const res = await app.fetch(
      new Request("http://localhost/actuator/features", {
        headers: { authorization: "Bearer secret" },
      }),
    );
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await app.close();
  });

  it("is in mappings and in the OpenAPI document", async () => {
    const app = await bootstrap({
      components: [Features],
      config: exposing("features,mappings"),
      actuator: actuator(),
      openapi: openApi({ docs: false }),
    });
    const { body } = await call(app, "GET", "/actuator/mappings");
    const own = (body.routes as { method: string; path: string; handler: string }[])
      .filter((r) => r.path.startsWith("/actuator/features"))
      .map((r) => `${r.method} ${r.path} ${r.handler}`);
    assert.deepEqual(own, [
      "GET /actuator/features Features.all",
      "GET /actuator/features/{name} Features.one",
      "POST /actuator/features/{name} Features.set",
      "POST /actuator/features Features.reset",
      "DELETE /actuator/features/{name} Features.drop",
    ]);
    const doc = await openApiDocument(app);
    const paths = doc.paths as Record<string, Record<string, { tags?: string[] }>>;
    assert.deepEqual(Object.keys(paths["/actuator/features/{name}"]).sort(), [
      "delete",
      "get",
      "post",
    ]);
    assert.deepEqual(paths["/actuator/features"].get.tags, ["Actuator"]);
    await app.close();
  });

  it("stops bootstrap for an id that is Thaw's, invalid or taken, naming the bean", async () => {
    @Endpoint("health")
    class MyHealth {
      @ReadOperation()
      read() {
        return {};
      }
    }
    @Endpoint("Bad-Id")
    class BadId {
      @ReadOperation()
      read() {
        return {};
      }
    }
    @Endpoint("features")
    class MoreFeatures {
      @ReadOperation()
      read() {
        return {};
      }
    }
    @Endpoint("empty")
    class Empty {}
    @Endpoint("twice")
    class Twice {
      @ReadOperation()
      first() {
        return {};
      }

      @ReadOperation()
      second() {
        return {};
      }
    }
    for (
      const [components, message] of [
        [
          [MyHealth],
          /@Endpoint\("health"\) on bean "myHealth" \(class MyHealth\): the actuator's own health endpoint/,
        ],
        [
          [BadId],
          /@Endpoint\("Bad-Id"\) on bean "badId" \(class BadId\): an endpoint's id is lowercase letters and digits/,
        ],
        [
          [Features, MoreFeatures],
          /@Endpoint\("features"\) on bean "moreFeatures" \(class MoreFeatures\): bean "features" \(class Features\) has this id too/,
        ],
        [[Empty], /@Endpoint\("empty"\) on bean "empty" \(class Empty\): it has no @ReadOperation/],
        [
          [Twice],
          /@Endpoint\("twice"\) on bean "twice" \(class Twice\): first and second are both GET \/actuator\/twice/,
        ],
      ] as const
    ) {
      await assert.rejects(
        bootstrap({
          components: [...components],
          config: exposing("health"),
          actuator: actuator(),
        }),
        message,
      );
    }
  });

  it("refuses decorators used on what they do not decorate", () => {
    assert.throws(() => Selector(), /names one path segment or more/);
    assert.throws(() => Selector("a/b"), /"a\/b" is no name/);
    assert.throws(
      () => ReadOperation({ query: ["a b"] }),
      /@ReadOperation\(\{ query \}\): "a b" is no name/,
    );
    assert.throws(
      () => DeleteOperation({ query: ["a", "a?"] }),
      /@DeleteOperation\(\{ query \}\): "a" is named twice/,
    );
    assert.throws(() => {
      class Statics {
        @ReadOperation()
        static read() {}
      }
      return Statics;
    }, /@ReadOperation decorates the instance methods of an @Endpoint class/);
  });
});
