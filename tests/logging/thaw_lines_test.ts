import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { noMask } from "../../src/config/secrets_mask.ts";
import { LevelTable } from "../../src/logging/level_table.ts";
import { LogWriter } from "../../src/logging/log_writer.ts";
import type { LogLevel } from "../../src/logging/logging_system.ts";
import type { StructuredFormat } from "../../src/logging/structured_line.ts";
import { routeThawLines } from "../../src/logging/thaw_lines.ts";
import { accessLogLine } from "../../src/observe/access_log.ts";
import { safeLogger } from "../../src/observe/loggable.ts";
import type { Logger } from "../../src/web/error_responder.ts";

// What may not stand raw in a line: anything a log viewer takes for a line break or hides.
// deno-lint-ignore no-control-regex
const UNSAFE_RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

// Thaw's logger as bootstrap makes it, routed as the feature routes it.
function routed(
  levels: ReadonlyMap<string, LogLevel>,
  format: StructuredFormat | undefined,
  methods: readonly ("error" | "warn" | "info")[] = ["error", "warn", "info"],
) {
  const lines: { method: string; args: unknown[] }[] = [];
  const app: Record<string, (...args: unknown[]) => void> = {};
  for (const method of methods) app[method] = (...args) => void lines.push({ method, args });
  const logger = safeLogger(app as unknown as Logger);
  routeThawLines(logger, new LogWriter({ ...logger }, new LevelTable(levels), format, noMask));
  return { lines, logger };
}

const entry = {
  time: "2026-01-01T00:00:00.000Z",
  method: "GET",
  route: "/a",
  path: "/a\u2028b",
  status: 200,
  duration_ms: 1.5,
};

describe("routeThawLines", () => {
  it("writes Thaw's lines as the logger thaw, at its level", () => {
    const { lines, logger } = routed(new Map([["thaw", "WARN"]]), undefined);
    logger.info?.("started");
    logger.warn?.("odd key");
    logger.error("[thaw] failed", new Error("x"));
    assert.deepEqual(lines.map((line) => [line.method, line.args[0]]), [
      ["warn", "odd key"],
      ["error", "[thaw] failed"],
    ]);
  });

  it("leaves absent a method the app's logger lacked", () => {
    const { logger } = routed(new Map(), undefined, ["error"]);
    assert.equal(logger.info, undefined);
    assert.equal(logger.warn, undefined);
  });

  it("takes a line that looks like the access log's for one of Thaw's own", () => {
    // The access log writes to the feature's writer itself: nothing here parses a line.
    const line = accessLogLine(entry);
    const { lines, logger } = routed(new Map(), "ecs");
    logger.info?.(line);
    const written = JSON.parse(String(lines[0].args[0]));
    assert.equal(written["log.logger"], "thaw");
    assert.equal(written.message, line);
  });

  it("gives one valid JSON line for every character below U+0100 and every lone surrogate", () => {
    const { lines, logger } = routed(new Map(), "logstash");
    const hostile: string[] = [];
    for (let code = 0; code < 0x100; code++) hostile.push(String.fromCharCode(code));
    hostile.push("\ud800", "\udc00", "\u2028", "\u2029", "\u202e", "\u2066");
    for (const c of hostile) logger.error(`m${c}`, new Error(`e${c}`), { [`f${c}`]: c });
    assert.equal(lines.length, hostile.length);
    lines.forEach(({ args }, i) => {
      const text = String(args[0]);
      assert.doesNotMatch(
        text,
        UNSAFE_RAW,
      );
      const parsed = JSON.parse(text);
      assert.equal(parsed.message, `m${hostile[i]}`);
      assert.equal(parsed[`f${hostile[i]}`], hostile[i]);
      assert.match(parsed.stack_trace, /^Error: e/);
    });
  });
});
