import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Autowired, bootstrap, GetMapping, RestController, Service } from "../../mod.ts";
import { Log, logging, LoggingSystem } from "../../logging.ts";
import { loggingSetup } from "../../src/logging/logging_setup.ts";
import { featureSetup } from "../../src/feature_value.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";

/** A logger that keeps every line, with the method it came to. */
function recording() {
  const lines: { method: string; text: string; details: unknown[] }[] = [];
  const keep = (method: string) => (text: string, ...details: unknown[]) =>
    void lines.push({ method, text, details });
  return { lines, logger: { error: keep("error"), warn: keep("warn"), info: keep("info") } };
}

@Service()
class UserService {
  @Autowired(Log)
  log!: Log;
}

@Service()
class AuditService extends UserService {}

@RestController()
class Failing {
  @Autowired(UserService)
  users!: UserService;

  @GetMapping("/fail")
  fail(): string {
    throw new TypeError("bad\nline hunter2-secret");
  }

  @GetMapping("/ok")
  ok(): string {
    this.users.log.info("served");
    return "ok";
  }
}

async function app(config: ConfigValues, logger = recording()) {
  const built = await bootstrap({
    controllers: [Failing],
    components: [UserService, AuditService],
    logger: logger.logger,
    logging: logging(),
    config: { db: { password: "hunter2-secret" }, ...config },
  });
  return { app: built, lines: logger.lines };
}

describe("the logging feature", () => {
  it("is what logging() stands for, and refuses logging.structured that is no mapping", async () => {
    assert.equal(featureSetup(logging(), { option: "logging", factory: "logging" }), loggingSetup);
    await assert.rejects(
      app({ logging: { structured: "ecs" } }),
      { message: "config: logging.structured must be a mapping: format: console: ecs or logstash" },
    );
  });

  it("gives each bean a logger named after its class, a subclass's after the subclass", async () => {
    const { app: built } = await app({});
    assert.equal(built.getBean(UserService).log.name, "UserService");
    assert.equal(built.getBean(AuditService).log.name, "AuditService");
    assert.equal(built.getBean(Log).name, "ROOT");
  });

  it("writes plain lines with the level and the logger's name, filtered by level", async () => {
    const { app: built, lines } = await app({
      logging: { level: { root: "WARN", UserService: "debug" } },
    });
    const { log } = built.getBean(UserService);
    log.trace("no");
    log.debug("yes %s", 1);
    built.getBean(AuditService).log.info("no: root is WARN");
    built.getBean(AuditService).log.warn("yes");
    assert.deepEqual(
      lines.map(({ method, text, details }) => [method, text, details]),
      [["info", "DEBUG UserService: yes %s", [1]], ["warn", "WARN AuditService: yes", []]],
    );
    assert.equal(log.isEnabled("DEBUG"), true);
    assert.equal(log.isEnabled("TRACE"), false);
  });

  it("takes a level change from the next line", async () => {
    const { app: built, lines } = await app({});
    const { log } = built.getBean(UserService);
    const system = built.getBean(LoggingSystem);
    log.debug("before");
    system.setLevel("UserService", "DEBUG");
    log.debug("after");
    system.setLevel("UserService", undefined);
    log.debug("cleared");
    assert.deepEqual(lines.map((line) => line.text), ["DEBUG UserService: after"]);
    assert.deepEqual(
      system.loggers().find((logger) => logger.name === "UserService"),
      { name: "UserService", effectiveLevel: "INFO" },
    );
  });

  it("writes Thaw's own lines as the logger thaw, structured, masked, one line each", async () => {
    const { app: built, lines } = await app({
      logging: { structured: { format: { console: "ecs" } } },
    });
    const response = await built.fetch(new Request("http://localhost/fail"));
    assert.equal(response.status, 500);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].method, "error");
    assert.doesNotMatch(lines[0].text, /\n|hunter2-secret/);
    const line = JSON.parse(lines[0].text);
    assert.equal(line["log.logger"], "thaw");
    assert.equal(line["log.level"], "ERROR");
    assert.equal(line.message, "Failing.fail (GET /fail) failed:");
    assert.equal(line["error.type"], "TypeError");
    assert.equal(line["error.message"], "bad\nline ***");
  });

  it("filters Thaw's own lines by the level of thaw", async () => {
    const { app: built, lines } = await app({ logging: { level: { thaw: "off" } } });
    await built.fetch(new Request("http://localhost/fail"));
    assert.deepEqual(lines, []);
  });

  it("writes the access log as thaw.access, its fields in a structured line", async () => {
    const { app: built, lines } = await app({
      logging: {
        access: { enabled: true },
        level: { thaw: "ERROR", "thaw.access": "INFO" },
        structured: { format: { console: "logstash" } },
      },
    });
    await built.fetch(new Request("http://localhost/ok?token=1"));
    const parsed = lines.map((line) => JSON.parse(line.text));
    assert.deepEqual(parsed.map((line) => line.logger_name), ["UserService", "thaw.access"]);
    const access = parsed[1];
    assert.equal(access.message, "GET /ok 200");
    assert.equal(access.level, "INFO");
    assert.equal(access.level_value, 20000);
    assert.equal(access.method, "GET");
    assert.equal(access.route, "/ok");
    assert.equal(access.status, 200);
  });

  it("leaves the access log's plain line as it is, and drops it below thaw.access's level", async () => {
    const plain = await app({ logging: { access: { enabled: true } } });
    await plain.app.fetch(new Request("http://localhost/ok"));
    assert.match(plain.lines[1].text, /^\{"time":"[^"]+","method":"GET","route":"\/ok"/);
    const quiet = await app({
      logging: { access: { enabled: true }, level: { "thaw.access": "WARN" } },
    });
    await quiet.app.fetch(new Request("http://localhost/ok"));
    assert.deepEqual(quiet.lines.map((line) => line.text), ["INFO UserService: served"]);
  });

  it("masks the configuration's secrets in an app's lines", async () => {
    const { app: built, lines } = await app({});
    built.getBean(UserService).log.warn("the password is hunter2-secret", "hunter2-secret");
    assert.deepEqual(lines[0].text, "WARN UserService: the password is ***");
    assert.deepEqual(lines[0].details, ["***"]);
  });

  it("refuses a bad level naming the key", async () => {
    await assert.rejects(
      app({ logging: { level: { UserService: "LOUD" } } }),
      /config: logging\.level\.UserService must be TRACE, DEBUG, INFO, WARN, ERROR or OFF, got "LOUD"/,
    );
    await assert.rejects(
      app({ logging: { structured: { format: { console: "gelf" } } } }),
      /logging\.structured\.format\.console must be ecs or logstash, got "gelf"/,
    );
  });

  it("stops bootstrap when a file sets its keys and the option is left out, saying what to import", async () => {
    for (
      const logging of [
        { level: { root: "DEBUG" } },
        { structured: { format: { console: "ecs" } } },
        { access: { enabled: true } },
      ]
    ) {
      await assert.rejects(
        bootstrap({ config: { logging } }),
        {
          message: "config: logging: these keys configure logging, which lives in its own entry " +
            'point: import { logging } from "@thaw/thaw/logging" and pass ' +
            "bootstrap({ logging: logging() })",
        },
      );
    }
    // False: the keys are left to nothing, as the app says.
    await bootstrap({ config: { logging: { level: { root: "DEBUG" } } }, logging: false });
  });

  it("takes no options", () => {
    assert.throws(
      () => (logging as (o: unknown) => unknown)({ level: "DEBUG" }),
      /takes no options/,
    );
  });
});
