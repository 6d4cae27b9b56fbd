import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  Autowired,
  bootstrap,
  type BootstrapOptions,
  Component,
  ConfigError,
  type ConfigValues,
  GetMapping,
  RestController,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { Log, logging } from "../../logging.ts";
import { listen } from "../../server.ts";
import { loggersReport } from "../../src/actuator/loggers_endpoint.ts";
import {
  type LoggerLevels,
  LoggingSystem,
  type LogLevel,
  ROOT_LOGGER,
} from "../../src/logging/logging_system.ts";

// An app's own logging system: levels by name, each logger taking its nearest dotted parent's.
@Component()
class Levels extends LoggingSystem {
  readonly configured = new Map<string, LogLevel>([[ROOT_LOGGER, "INFO"], ["app.orders", "WARN"]]);
  readonly made = new Set<string>(["app.orders", "app.orders.Payments", "thaw.access"]);
  readonly calls: [string, LogLevel | undefined][] = [];

  loggers(): readonly LoggerLevels[] {
    const names = [...new Set([...this.configured.keys(), ...this.made])]
      .filter((name) => name !== ROOT_LOGGER).sort();
    return [ROOT_LOGGER, ...names].map((name) => {
      const own = this.configured.get(name);
      return {
        name,
        ...(own === undefined ? {} : { configuredLevel: own }),
        effectiveLevel: this.effective(name),
      };
    });
  }

  setLevel(name: string, level: LogLevel | undefined): void {
    this.calls.push([name, level]);
    if (name === ROOT_LOGGER) this.configured.set(name, level ?? "INFO");
    else if (level === undefined) this.configured.delete(name);
    else this.configured.set(name, level);
  }

  private effective(name: string): LogLevel {
    for (let n = name;;) {
      const own = this.configured.get(n);
      if (own !== undefined) return own;
      const dot = n.lastIndexOf(".");
      if (dot === -1) return this.configured.get(ROOT_LOGGER)!;
      n = n.slice(0, dot);
    }
  }
}

const exposing = (include: string) => ({
  management: { endpoints: { web: { exposure: { include } } } },
});

type App = { fetch(r: Request): Response | Promise<Response> };

const JSON_TYPE = { "content-type": "application/json" };

async function call(
  app: App,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = body === undefined ? {} : JSON_TYPE,
) {
  const response = await app.fetch(
    new Request(`http://localhost${path}`, { method, body: body ?? null, headers }),
  );
  const text = await response.text();
  return { status: response.status, text, body: text === "" ? undefined : JSON.parse(text) };
}

const post = (app: App, name: string, body: string, headers?: Record<string, string>) =>
  call(app, "POST", `/actuator/loggers/${name}`, body, headers);

// The app of `options` with loggers exposed on a management port of its own, listening; `config`
// holds the app's other keys.
async function servedWithLoggers(
  options: Omit<BootstrapOptions, "actuator" | "config">,
  config: ConfigValues = {},
) {
  const app = await bootstrap({
    ...options,
    actuator: actuator(),
    config: {
      ...config,
      management: {
        server: { port: 0, address: "127.0.0.1" },
        endpoints: { web: { exposure: { include: "loggers" } } },
      },
    },
  });
  const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
  return { app, server, management: server.management!.url };
}

// POST over a real server, to `base` (a port's URL): the status, the body read to its end.
async function postTo(base: string, name: string, body: string): Promise<number> {
  const response = await fetch(`${base}/actuator/loggers/${name}`, {
    method: "POST",
    headers: JSON_TYPE,
    body,
  });
  await response.body?.cancel();
  return response.status;
}

const LEVELS = ["OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"];
// What no answer may hold raw: C0 and C1 controls, DEL, the line and paragraph separators, the
// bidirectional marks, and a lone surrogate (no UTF-8 can carry one).
const UNSAFE = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;

describe("/actuator/loggers", () => {
  it("answers 404 to reads and writes alike unless exposure names it", async () => {
    const excluding = {
      management: { endpoints: { web: { exposure: { include: "*", exclude: "loggers" } } } },
    };
    for (const config of [exposing("health,caches"), excluding]) {
      const app = await bootstrap({ components: [Levels], actuator: actuator(), config });
      for (
        const [method, path] of [
          ["GET", "/actuator/loggers"],
          ["GET", "/actuator/loggers/ROOT"],
          ["POST", "/actuator/loggers/ROOT"],
        ]
      ) {
        const body = method === "POST" ? '{"configuredLevel":"TRACE"}' : undefined;
        assert.equal((await call(app, method, path, body)).status, 404, `${method} ${path}`);
      }
      assert.deepEqual(app.getBean(Levels).calls, []);
      if (config === excluding) {
        assert.equal((await call(app, "GET", "/actuator")).body._links.loggers, undefined);
      }
      await app.close();
    }
  });

  it("lists the levels, every logger's configured and effective level, and no groups", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const { status, body } = await call(app, "GET", "/actuator/loggers");
    assert.equal(status, 200);
    assert.deepEqual(body, {
      levels: LEVELS,
      loggers: {
        ROOT: { configuredLevel: "INFO", effectiveLevel: "INFO" },
        "app.orders": { configuredLevel: "WARN", effectiveLevel: "WARN" },
        "app.orders.Payments": { configuredLevel: null, effectiveLevel: "WARN" },
        "thaw.access": { configuredLevel: null, effectiveLevel: "INFO" },
      },
      groups: {},
    });
    // In the logging system's order, ROOT first.
    assert.deepEqual(Object.keys(body.loggers), [
      "ROOT",
      "app.orders",
      "app.orders.Payments",
      "thaw.access",
    ]);
    assert.deepEqual(await call(app, "GET", "/actuator/loggers/app.orders.Payments"), {
      status: 200,
      text: '{"configuredLevel":null,"effectiveLevel":"WARN"}',
      body: { configuredLevel: null, effectiveLevel: "WARN" },
    });
    for (const root of ["ROOT", "root", "Root"]) {
      assert.deepEqual((await call(app, "GET", `/actuator/loggers/${root}`)).body, {
        configuredLevel: "INFO",
        effectiveLevel: "INFO",
      });
    }
    // Spring answers 404 for a logger the logging system does not know.
    assert.equal((await call(app, "GET", "/actuator/loggers/app.unknown")).status, 404);
    assert.equal((await call(app, "GET", "/actuator/loggers/toString")).status, 404);
    assert.equal((await call(app, "GET", "/actuator/loggers/__proto__")).status, 404);
    const { _links } = (await call(app, "GET", "/actuator")).body;
    assert.equal(_links.loggers.href, "http://localhost/actuator/loggers");
    await app.close();
  });

  it("POST sets a logger's level in any case, and null, {} or no body clears it: 204", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("health,loggers"),
    });
    const levels = app.getBean(Levels);
    const one = async (name: string) => (await call(app, "GET", `/actuator/loggers/${name}`)).body;
    assert.deepEqual(await post(app, "app.orders.Payments", '{"configuredLevel":"debug"}'), {
      status: 204,
      text: "",
      body: undefined,
    });
    assert.deepEqual(await one("app.orders.Payments"), {
      configuredLevel: "DEBUG",
      effectiveLevel: "DEBUG",
    });
    // A logger not made yet: set by name, listed from then on.
    assert.equal((await post(app, "app.billing", '{"configuredLevel":"Trace"}')).status, 204);
    assert.deepEqual(await one("app.billing"), {
      configuredLevel: "TRACE",
      effectiveLevel: "TRACE",
    });
    assert.equal((await post(app, "root", '{"configuredLevel":"ERROR"}')).status, 204);
    assert.deepEqual((await call(app, "GET", "/actuator/loggers")).body.loggers["thaw.access"], {
      configuredLevel: null,
      effectiveLevel: "ERROR",
    });
    // Spring's media type for its actuator is JSON too.
    const v3 = { "content-type": "application/vnd.spring-boot.actuator.v3+json" };
    assert.equal((await post(app, "app.orders", '{"configuredLevel":"OFF"}', v3)).status, 204);
    assert.deepEqual(await one("app.orders"), { configuredLevel: "OFF", effectiveLevel: "OFF" });
    // No body at all is sent with no type (a string body, even "", gets text/plain from fetch).
    for (const clear of ['{"configuredLevel":null}', "{}", " ", undefined]) {
      levels.configured.set("app.orders", "WARN");
      const answer = clear === undefined
        ? await call(app, "POST", "/actuator/loggers/app.orders", undefined, {})
        : await post(app, "app.orders", clear);
      assert.equal(answer.status, 204, clear);
      assert.deepEqual(await one("app.orders.Payments"), {
        configuredLevel: "DEBUG",
        effectiveLevel: "DEBUG",
      });
      assert.deepEqual(await one("app.orders"), { configuredLevel: null, effectiveLevel: "ERROR" });
    }
    assert.deepEqual(levels.calls.slice(0, 4), [
      ["app.orders.Payments", "DEBUG"],
      ["app.billing", "TRACE"],
      ["ROOT", "ERROR"],
      ["app.orders", "OFF"],
    ]);
    assert.deepEqual(levels.calls.slice(4), Array(4).fill(["app.orders", undefined]));
    await app.close();
  });

  it("with logging(), a logger set then cleared stays known: configuredLevel null, as Spring", async () => {
    const app = await bootstrap({
      logging: logging(),
      actuator: actuator(),
      config: exposing("loggers"),
      logger: { error: () => {}, info: () => {} },
    });
    assert.equal((await post(app, "app.audit", '{"configuredLevel":"DEBUG"}')).status, 204);
    assert.equal((await post(app, "app.audit", '{"configuredLevel":null}')).status, 204);
    const one = await call(app, "GET", "/actuator/loggers/app.audit");
    assert.deepEqual({ status: one.status, body: one.body }, {
      status: 200,
      body: { configuredLevel: null, effectiveLevel: "INFO" },
    });
    assert.deepEqual((await call(app, "GET", "/actuator/loggers")).body.loggers["app.audit"], {
      configuredLevel: null,
      effectiveLevel: "INFO",
    });
    // A POST names a logger, as Logback's makes it by its name: cleared, it is known from then on.
    assert.equal((await post(app, "app.never", "")).status, 204);
    assert.deepEqual((await call(app, "GET", "/actuator/loggers/app.never")).body, {
      configuredLevel: null,
      effectiveLevel: "INFO",
    });
    await app.close();
  });

  it("answers 400 naming what is wrong for a bad level or body, 415 for a body not JSON", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const levels = app.getBean(Levels);
    const cases: [string, RegExp][] = [
      [
        '{"configuredLevel":"FATAL"}',
        /configuredLevel: no level "FATAL"; the levels are OFF, ERROR/,
      ],
      ['{"configuredLevel":"verbose"}', /no level "verbose"/],
      ['{"configuredLevel":"ınfo"}', /configuredLevel: no level of that name; the levels are/],
      ['{"configuredLevel":"IN\\nFO"}', /configuredLevel: no level of that name; the levels are/],
      [
        '{"configuredLevel":"\\u001b[31mred"}',
        /configuredLevel: no level of that name; the levels are/,
      ],
      [
        `{"configuredLevel":"${"D".repeat(100)}"}`,
        /configuredLevel: no level of that name; the levels are/,
      ],
      ['{"configuredLevel":5}', /configuredLevel must be a level's name or null, got a number/],
      ['{"configuredLevel":["DEBUG"]}', /configuredLevel must be .*, got an array/],
      ['"DEBUG"', /the body must be a JSON object like \{ "configuredLevel": "DEBUG" \}/],
      ["[]", /the body must be a JSON object/],
      ["null", /the body must be a JSON object/],
      ['{"configuredLevel":"DEBUG"', /the body is not JSON/],
      ["configuredLevel=DEBUG\u0000\n", /the body is not JSON/],
    ];
    for (const [body, message] of cases) {
      const answer = await post(app, "app.orders", body);
      assert.equal(answer.status, 400, body);
      assert.match(answer.body.error, message, body);
      assert.doesNotMatch(answer.text, UNSAFE, body);
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const answer = await post(app, "app.orders", '{"configuredLevel":"TRACE"}', {
        "content-type": type,
      });
      assert.equal(answer.status, 415, type);
      assert.match(answer.body.error, /application\/json/);
    }
    assert.equal(
      (await post(app, "app.orders", '{"configuredLevel":"TRACE"}', {})).status,
      415,
      "a body without a type",
    );
    // An HTML form with no fields sends an empty body of its type, without a preflight: refused
    // as any type that is not JSON, so that no cross-site page clears a level.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const answer = await post(app, "app.orders", "", { "content-type": type });
      assert.equal(answer.status, 415, `an empty ${type} body`);
    }
    const large = JSON.stringify({ configuredLevel: "DEBUG", pad: "x".repeat(70_000) });
    assert.equal((await post(app, "app.orders", large)).status, 413);
    assert.deepEqual(levels.calls, []);
    await app.close();
  });

  it("takes a name of any byte, percent-encoded, or refuses it with 400: no answer breaks", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const levels = app.getBean(Levels);
    const accepted: string[] = [];
    for (let byte = 0; byte <= 255; byte++) {
      const char = String.fromCharCode(byte);
      const hex = byte.toString(16).toUpperCase().padStart(2, "0");
      // The byte alone (no UTF-8 above 0x7F), and the character as UTF-8.
      for (const encoded of [`%${hex}`, encodeURIComponent(char)]) {
        const path = `a${encoded}z`;
        const answer = await post(app, path, '{"configuredLevel":"DEBUG"}');
        assert.doesNotMatch(answer.text, UNSAFE, path);
        // The router refuses a control character, `/` and `\` (%2F, %5C), and bytes not UTF-8.
        const refused = /[\p{Cc}/\\]/u.test(char) || (byte > 0x7f && encoded.length === 3);
        if (refused) {
          assert.equal(answer.status, 400, path);
          assert.equal(typeof answer.body.error, "string", path);
          continue;
        }
        assert.equal(answer.status, 204, path);
        accepted.push(`a${char}z`);
        assert.deepEqual((await call(app, "GET", `/actuator/loggers/${path}`)).body, {
          configuredLevel: "DEBUG",
          effectiveLevel: "DEBUG",
        });
      }
    }
    // A lone surrogate has no UTF-8: its CESU bytes are refused.
    for (const path of ["a%ED%A0%80z", "a%ED%B0%80", "%F4%90%80%80"]) {
      assert.equal((await post(app, path, '{"configuredLevel":"DEBUG"}')).status, 400, path);
    }
    assert.deepEqual(levels.calls.map(([name]) => name), accepted);
    const all = await call(app, "GET", "/actuator/loggers");
    assert.equal(all.status, 200);
    assert.doesNotMatch(all.text, UNSAFE);
    for (const name of accepted) {
      assert.equal(all.body.loggers[name]?.configuredLevel, "DEBUG", JSON.stringify(name));
    }
    await app.close();
  });

  it("serves names the logging system holds of any character as JSON that escapes them", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const levels = app.getBean(Levels);
    const names = [
      ...Array.from({ length: 256 }, (_, code) => `n${String.fromCharCode(code)}`),
      "\ud800",
      "x\udfff",
      "\ud83d",
      "\u2028\u2029",
      "\u202eevil",
      "__proto__",
      "constructor",
      "",
    ];
    names.forEach((name) => levels.made.add(name));
    levels.configured.set("__proto__", "TRACE");
    const all = await call(app, "GET", "/actuator/loggers");
    assert.equal(all.status, 200);
    assert.doesNotMatch(all.text, UNSAFE);
    assert.deepEqual(Object.keys(all.body.loggers).sort(), ["ROOT", ...levels.made].sort());
    assert.equal(Object.getPrototypeOf(all.body.loggers), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(all.body.loggers, "__proto__")?.value, {
      configuredLevel: "TRACE",
      effectiveLevel: "TRACE",
    });
    // The escapes say the same characters: a lone surrogate as its \u escape.
    assert.ok(all.text.includes('"\\ud800":'));
    assert.ok(all.text.includes('"n\\u009b":'));
    assert.ok(all.text.includes('"\\u2028\\u2029":'));
    assert.ok(all.text.includes('"\\u202eevil":'));
    await app.close();
  });

  it("refuses a name with a control character (a mounting app routed) or a bidi mark, 400", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const parent = new Hono().route("/", app.hono);
    for (const name of ["a%0Ab", "a%1B%5B31mb", "%E2%80%A8", "a%C2%9Bb", "a%00"]) {
      const answer = await post(parent, name, '{"configuredLevel":"DEBUG"}');
      assert.equal(answer.status, 400, name);
      assert.match(answer.body.error, /a logger's name holds no control character/);
      assert.doesNotMatch(answer.text, UNSAFE);
      assert.equal((await call(parent, "GET", `/actuator/loggers/${name}`)).status, 404, name);
    }
    // Thaw's router lets these through: they are no control characters.
    for (const name of ["a%E2%80%AEb", "%E2%81%A6x"]) {
      const answer = await post(app, name, '{"configuredLevel":"DEBUG"}');
      assert.equal(answer.status, 400, name);
      assert.match(answer.body.error, /bidirectional mark/);
    }
    assert.deepEqual(app.getBean(Levels).calls, []);
    await app.close();
  });

  it("refuses a name over 256 characters, and a new one past 1,000 loggers, 400: no client fills it", async () => {
    const app = await bootstrap({
      components: [Levels],
      actuator: actuator(),
      config: exposing("loggers"),
    });
    const levels = app.getBean(Levels);
    const long = await post(app, "a".repeat(257), '{"configuredLevel":"DEBUG"}');
    assert.equal(long.status, 400);
    assert.match(long.body.error, /256 characters/);
    assert.equal((await post(app, "a".repeat(256), '{"configuredLevel":"DEBUG"}')).status, 204);
    for (let i = 0; levels.loggers().length < 1000; i++) levels.made.add(`made.${i}`);
    const more = await post(app, "one.more", '{"configuredLevel":"DEBUG"}');
    assert.equal(more.status, 400);
    assert.match(more.body.error, /1000 loggers/);
    // A logger it knows is still set, and cleared.
    assert.equal((await post(app, "made.7", '{"configuredLevel":"WARN"}')).status, 204);
    assert.equal((await post(app, "made.7", "")).status, 204);
    assert.deepEqual(levels.calls.map(([name]) => name.length > 20 ? "long" : name), [
      "long",
      "made.7",
      "made.7",
    ]);
    await app.close();
  });

  it("sets a level over a real server, on the management port alone, past the app's guard", async () => {
    const { app, server, management } = await servedWithLoggers({
      components: [Levels],
      // The app's guard: refuses every request on the app's port.
      middleware: [(c) => Promise.resolve(c.text("no", 401))],
    });
    try {
      assert.equal(await postTo(management, "app.orders", '{"configuredLevel":"TRACE"}'), 204);
      const read = await fetch(`${management}/actuator/loggers/app.orders.Payments`);
      assert.deepEqual(await read.json(), { configuredLevel: null, effectiveLevel: "TRACE" });
      assert.equal(await postTo(server.url, "app.orders", '{"configuredLevel":"OFF"}'), 401);
      assert.deepEqual(app.getBean(Levels).calls, [["app.orders", "TRACE"]]);
    } finally {
      await server.close();
    }
  });

  it("changes a bean's level live with logging(): its next line is written, over a real server", async () => {
    @RestController()
    class OrderController {
      @Autowired(Log)
      log!: Log;

      @GetMapping("/order")
      order(): string {
        this.log.debug("order looked up");
        return "ok";
      }
    }
    const lines: string[] = [];
    const keep = (line: string) => void lines.push(line);
    const { server, management } = await servedWithLoggers(
      {
        controllers: [OrderController],
        logger: { error: keep, warn: keep, info: keep },
        logging: logging(),
      },
      { logging: { level: { root: "INFO", thaw: "WARN" } } },
    );
    try {
      const order = async () => {
        const response = await fetch(`${server.url}/order`);
        assert.equal(await response.text(), "ok");
      };
      await order();
      assert.deepEqual(lines.filter((l) => l.includes("order looked up")), []);
      // The bean's logger is listed by its class's name, at ROOT's level.
      const before = await (await fetch(`${management}/actuator/loggers`)).json();
      assert.deepEqual(before.loggers.OrderController, {
        configuredLevel: null,
        effectiveLevel: "INFO",
      });
      assert.deepEqual(before.loggers.thaw, { configuredLevel: "WARN", effectiveLevel: "WARN" });
      assert.equal(await postTo(management, "OrderController", '{"configuredLevel":"debug"}'), 204);
      await order();
      assert.equal(lines.filter((l) => l.includes("order looked up")).length, 1);
      const read = await fetch(`${management}/actuator/loggers/OrderController`);
      assert.deepEqual(await read.json(), { configuredLevel: "DEBUG", effectiveLevel: "DEBUG" });
      // Cleared: it takes ROOT's again, and the next line is not written.
      assert.equal(await postTo(management, "OrderController", '{"configuredLevel":null}'), 204);
      await order();
      assert.equal(lines.filter((l) => l.includes("order looked up")).length, 1);
    } finally {
      await server.close();
    }
  });

  it("stops bootstrap without a LoggingSystem bean when include names loggers; * leaves it out", async () => {
    await assert.rejects(
      bootstrap({ actuator: actuator(), config: exposing("health,loggers") }),
      (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /management\.endpoints\.web\.exposure\.include.*: loggers/);
        assert.match(error.message, /bootstrap\(\{ logging: logging\(\) \}\)/);
        assert.match(error.message, /"@thaw\/thaw\/logging"/);
        return true;
      },
    );
    const all = await bootstrap({ actuator: actuator(), config: exposing("*") });
    assert.equal((await call(all, "GET", "/actuator/loggers")).status, 404);
    assert.equal((await call(all, "POST", "/actuator/loggers/ROOT", "{}")).status, 404);
    const { _links } = (await call(all, "GET", "/actuator")).body;
    assert.equal(_links.loggers, undefined);
    assert.equal(typeof _links.caches.href, "string");
    await all.close();
  });

  it("stops bootstrap with two LoggingSystem beans, naming both", async () => {
    @Component()
    class Other extends Levels {}
    await assert.rejects(
      bootstrap({ components: [Levels, Other], actuator: actuator(), config: exposing("*") }),
      (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /reads one LoggingSystem bean; the app has 2: levels, other/);
        return true;
      },
    );
  });
});

describe("loggersReport()", () => {
  it("gives null for a level not configured, and keeps a name of Object's own", () => {
    const report = loggersReport([
      { name: "ROOT", configuredLevel: "WARN", effectiveLevel: "WARN" },
      { name: "hasOwnProperty", effectiveLevel: "WARN" },
    ]);
    assert.deepEqual(JSON.parse(JSON.stringify(report)), {
      levels: LEVELS,
      loggers: {
        ROOT: { configuredLevel: "WARN", effectiveLevel: "WARN" },
        hasOwnProperty: { configuredLevel: null, effectiveLevel: "WARN" },
      },
      groups: {},
    });
  });
});
