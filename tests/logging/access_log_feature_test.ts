// The access log with the logging feature: plain lines as the access log always wrote them, or
// the structured line of the configured shape, for requests and for streams at their end.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, GetMapping, RestController, SseMapping } from "../../mod.ts";
import { logging } from "../../logging.ts";
import { accessLog, ecsFields } from "../../src/logging/access_log_feature.ts";
import { LogWriter } from "../../src/logging/log_writer.ts";
import { LevelTable } from "../../src/logging/level_table.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { noMask } from "../../src/config/secrets_mask.ts";
import type { ConfigValues } from "../../src/config/config_values.ts";

@RestController()
class Pages {
  @GetMapping("/pages/{id}")
  page(): string {
    return "page";
  }

  @SseMapping("/feed")
  async *feed() {
    yield "one";
    yield "two";
  }
}

async function served(config: ConfigValues, path: string): Promise<string[]> {
  const lines: string[] = [];
  const app = await bootstrap({
    controllers: [Pages],
    logging: logging(),
    logger: { error: () => {}, info: (line: string) => void lines.push(line) },
    config: { db: { password: "hunter2-secret" }, ...config },
  });
  const response = await app.fetch(
    new Request(`http://localhost${path}`, { headers: { "user-agent": "probe/1" } }),
  );
  await response.text();
  await app.close();
  return lines;
}

describe("the access log of the logging feature", () => {
  it("is off unless logging.access.enabled", async () => {
    const settings = readSettings(resolveConfig({}, () => undefined));
    const writer = new LogWriter({ error: () => {} }, new LevelTable(new Map()), undefined, noMask);
    assert.equal(accessLog(settings, {}, writer), undefined);
    assert.deepEqual(await served({}, "/pages/1"), []);
  });

  it("writes ECS fields in an ecs line", async () => {
    const lines = await served({
      logging: { access: { enabled: true }, structured: { format: { console: "ecs" } } },
    }, "/pages/7?token=x");
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]);
    assert.equal(line["log.logger"], "thaw.access");
    assert.equal(line.message, "GET /pages/7 200");
    assert.equal(line["http.request.method"], "GET");
    assert.equal(line["http.route"], "/pages/{id}");
    assert.equal(line["url.path"], "/pages/7");
    assert.equal(line["http.response.status_code"], 200);
    assert.equal(line["http.response.body.bytes"], 4);
    assert.equal(line["user_agent.original"], "probe/1");
    assert.ok(Number.isInteger(line["event.duration"]) && line["event.duration"] >= 0);
    assert.ok(!Number.isNaN(Date.parse(line["event.start"])));
    // Nothing of the plain entry's names, nothing unknown.
    assert.equal(line.method, undefined);
    assert.equal("trace.id" in line, false);
  });

  it("writes a stream's ECS fields at its end", async () => {
    const lines = await served({
      logging: { access: { enabled: true }, structured: { format: { console: "ecs" } } },
    }, "/feed");
    const ended = lines.map((line) => JSON.parse(line)).find((line) => "thaw.stream.kind" in line);
    assert.equal(ended["thaw.stream.kind"], "sse");
    assert.equal(ended["thaw.stream.sent"], 2);
    assert.equal(ended["http.route"], "/feed");
  });

  it("names a stream's fields under thaw.stream, and leaves out what is unknown", () => {
    const entry = { time: "t", method: "GET", route: "/r", path: "/r", status: 101 };
    assert.deepEqual(
      ecsFields({ ...entry, duration_ms: 1.5, stream: "websocket", sent: 2, received: 1 }),
      {
        "event.start": "t",
        "event.duration": 1_500_000,
        "http.request.method": "GET",
        "http.route": "/r",
        "url.path": "/r",
        "http.response.status_code": 101,
        "thaw.stream.kind": "websocket",
        "thaw.stream.sent": 2,
        "thaw.stream.received": 1,
      },
    );
  });

  it("writes as thaw.access, at its own level over thaw's", async () => {
    const quiet = { thaw: "OFF", "thaw.access": "INFO" };
    const lines = await served(
      { logging: { access: { enabled: true }, level: quiet } },
      "/pages/1",
    );
    assert.equal(JSON.parse(lines[0]).route, "/pages/{id}");
    const off = await served(
      { logging: { access: { enabled: true }, level: { "thaw.access": "OFF" } } },
      "/pages/1",
    );
    assert.deepEqual(off, []);
  });

  it("masks a plain line's fields one by one, so that the line stays JSON", async () => {
    const [line] = await served(
      { logging: { access: { enabled: true } } },
      "/pages/hunter2-secret",
    );
    const entry = JSON.parse(line);
    assert.equal(entry.path, "/pages/***");
    assert.equal(entry.route, "/pages/{id}");
  });
});
