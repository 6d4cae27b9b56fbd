// Every worker of tests/fixtures/ (and so every part of src/ they bundle: schedules, streams,
// sockets, uploads, the actuator, the configuration) starts on the workerd that `wrangler dev` 4.86
// runs. That build refuses at global scope what later ones allow (`new AbortController()`), and a
// worker's `await bootstrap(...)` runs at global scope: whatever bootstrap builds must do no I/O,
// set no timer, draw no random value and create no AbortController until a request or an event.
// The same workers on the pinned workerd are the other edge tests.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { serveWorker, wranglerWorkerd } from "./workerd.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

const workers = readdirSync(FIXTURES).filter((name) => name.endsWith("_worker.ts")).sort();

describe("every worker fixture starts on the workerd of wrangler 4.86 (strict global scope)", () => {
  it("finds the fixtures", () => {
    assert.ok(workers.includes("scheduled_worker.ts"), workers.join(", "));
  });

  for (const file of workers) {
    for (const flags of [[], ["nodejs_compat"]]) {
      const shown = `${file}${flags.length === 0 ? "" : " with nodejs_compat"}`;
      it(`${shown}: bootstrap at global scope, then a request answered`, async () => {
        const worker = await serveWorker(FIXTURES + file, file.replace(/\.ts$/, ""), {
          flags,
          workerd: wranglerWorkerd(),
        });
        try {
          const response = await fetch(`${worker.origin}/actuator/health`);
          await response.body?.cancel();
          // A worker whose global scope threw answers every request 500 (or never starts).
          assert.notEqual(response.status, 500, worker.output());
          assert.doesNotMatch(worker.output(), /Disallowed operation|Uncaught/);
        } finally {
          await worker.close();
        }
      });
    }
  }
});
