// /actuator/prometheus on real workerd: a worker that hands OpenTelemetry's modules to actuator()
// (tests/fixtures/prometheus_worker.ts), bundled as tools/bundle_worker.ts bundles the sample app,
// answers the scrape with its request metrics and the app's own meter, in a text promtool accepts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/prometheus_worker.ts", import.meta.url));

describe("/actuator/prometheus on workerd, with OpenTelemetry's modules passed to actuator()", () => {
  let worker: ServedWorker;
  let origin: string;

  // Without nodejs_compat: the worker needs nothing of Node's.
  before(async () => {
    worker = await serveWorker(FIXTURE, "prometheus_worker", { readyPath: "/actuator/health" });
    origin = worker.origin;
  });

  after(() => worker?.close());

  it("answers the scrape: the request histogram by route and the app's counter", async () => {
    for (const id of [1, 2, 3]) {
      const item = await fetch(`${origin}/items/${id}`);
      assert.deepEqual([item.status, await item.json()], [200, { id }]);
    }
    const scrape = await fetch(`${origin}/actuator/prometheus`);
    assert.equal(scrape.status, 200);
    assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await scrape.text();
    assert.match(
      text,
      /^http_server_request_duration_seconds_count\{http_request_method="GET",http_route="\/items\/\{id\}",http_response_status_code="200",[^}]*\} 3$/m,
    );
    assert.match(text, /^orders_created_total\{[^}]*otel_scope_name="shop"[^}]*\} 3$/m);
    // No `process` without nodejs_compat: the process's series are absent, and the scrape answers.
    assert.doesNotMatch(text, /^(process|v8js|nodejs)_/m);
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.error, undefined, "promtool must be installed (npm test installs it)");
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  });
});
