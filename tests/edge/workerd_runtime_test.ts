// workerd names itself, with or without nodejs_compat: that flag gives it a `process` with Node's
// version and a pid of 1, which are no Node's and no process's. /actuator/info says `workerd`, and
// an ECS line carries no `process.pid` (docs/observability.md).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/runtime_worker.ts", import.meta.url));

for (const flags of [[], ["nodejs_compat"]]) {
  describe(`workerd${flags.length === 0 ? "" : " with nodejs_compat"} names itself`, () => {
    let worker: ServedWorker;

    before(async () => {
      worker = await serveWorker(FIXTURE, "runtime_worker", { flags });
    });

    after(() => worker?.close());

    it("/actuator/info: the runtime is workerd", async () => {
      const response = await fetch(`${worker.origin}/actuator/info`);
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.deepEqual(body.runtime, { name: "workerd", version: "" });
    });

    it("an ECS line has no process.pid", async () => {
      const response = await fetch(`${worker.origin}/log`);
      assert.equal(response.status, 200);
      const lines: string[] = await response.json();
      const line = lines.map((text) => JSON.parse(text))
        .find((parsed) => parsed.message === "asked for the log");
      assert.ok(line !== undefined, lines.join("\n"));
      assert.equal(line["ecs.version"], "8.11");
      assert.equal("process.pid" in line, false, JSON.stringify(line));
    });
  });
}
