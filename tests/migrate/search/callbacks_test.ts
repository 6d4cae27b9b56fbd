// Flyway's callbacks on a search connection: JSON (and code) files run at their events, never
// recorded in the records index.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { os, Workspace } from "./cluster.ts";

async function recordedPaths(ws: Workspace): Promise<string[]> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { exists: { field: "migration_path" } },
  });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body.hits.hits.map((h: { _source: { migration_path: string } }) =>
    h._source.migration_path
  ).sort();
}

describe("search callbacks", () => {
  it("run at their events on every migrate, around each file, and are never recorded", async () => {
    await using ws = await Workspace.create();
    const log = `${ws.id}-log`;
    // Each callback indexes a document of its own in the log index: the count says how often.
    const entry = (event: string) => ({
      method: "POST",
      path: `/${log}/_doc?refresh=true`,
      body: { event },
    });
    try {
      await ws.file("beforeMigrate.json", entry("beforeMigrate"));
      await ws.file("beforeEachMigrate.json", entry("beforeEachMigrate"));
      await ws.file(
        "afterEachMigrate.js",
        `export default async (ctx) => {\n  await ctx.request("POST", "/${log}/_doc?refresh=true", ` +
          `{ event: "afterEachMigrate" });\n};\n`,
      );
      await ws.file("afterMigrate.json", entry("afterMigrate"));
      await ws.file("V1__a.json", {
        method: "PUT",
        path: `/${ws.id}-a`,
        body: { settings: { number_of_replicas: 0 } },
      });
      const first = await ws.ok("--json");
      assert.deepEqual(
        first.report!.connections[0].callbacks!.map((c) => [c.path, c.runs]),
        [
          ["beforeMigrate.json", 1],
          ["beforeEachMigrate.json", 1],
          ["afterEachMigrate.js", 1],
          ["afterMigrate.json", 1],
        ],
      );
      await ws.ok();
      const counts = await os("POST", `/${log}/_search`, {
        size: 0,
        aggs: { events: { terms: { field: "event.keyword" } } },
      });
      const byEvent = Object.fromEntries(
        counts.body.aggregations.events.buckets.map((b: { key: string; doc_count: number }) => [
          b.key,
          b.doc_count,
        ]),
      );
      assert.deepEqual(byEvent, {
        beforeMigrate: 2,
        afterMigrate: 2,
        beforeEachMigrate: 1,
        afterEachMigrate: 1,
      });
      assert.deepEqual(await recordedPaths(ws), ["V1__a.json"]);
      const status = await ws.ok("status");
      assert.match(status.out, /callback +afterMigrate\.json \(afterMigrate\)/);
    } finally {
      for (const index of [ws.recordsIndex, log, `${ws.id}-a`]) await os("DELETE", `/${index}`);
    }
  });

  it("a failing callback stops the run with exit 1, naming it and the request", async () => {
    await using ws = await Workspace.create();
    try {
      await ws.file("beforeMigrate.json", {
        method: "POST",
        path: `/${ws.id}-missing/_close`,
      });
      await ws.file("V1__a.json", {
        method: "PUT",
        path: `/${ws.id}-a`,
        body: { settings: { number_of_replicas: 0 } },
      });
      const run = await ws.run("--json");
      assert.equal(run.code, 1);
      const error = run.report!.error!;
      assert.equal(error.callback, "beforeMigrate");
      assert.equal(error.file, "beforeMigrate.json");
      assert.equal(error.status, 404);
      assert.match(
        error.message,
        /callback beforeMigrate\.json \(beforeMigrate\), POST .*_close, HTTP 404/,
      );
      assert.equal((await os("HEAD", `/${ws.id}-a`)).status, 404);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-a`]) await os("DELETE", `/${index}`);
    }
  });

  it("a failing afterEachMigrate: the file ran and is recorded, and the report says so", async () => {
    await using ws = await Workspace.create();
    try {
      await ws.file("afterEachMigrate__1ok.json", { method: "GET", path: "/_cluster/health" });
      await ws.file("afterEachMigrate__2fail.json", {
        method: "POST",
        path: `/${ws.id}-missing/_close`,
      });
      await ws.file("V1__a.json", {
        method: "PUT",
        path: `/${ws.id}-a`,
        body: { settings: { number_of_replicas: 0 } },
      });
      await ws.file("V2__b.json", {
        method: "PUT",
        path: `/${ws.id}-b`,
        body: { settings: { number_of_replicas: 0 } },
      });
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.callback, "afterEachMigrate");
      assert.equal(error.file, "afterEachMigrate__2fail.json");
      assert.match(error.message, /V1__a\.json ran and is recorded/);
      // The callback that ran counts; the one that failed does not.
      assert.deepEqual(
        run.report!.connections[0].callbacks!.map((c) => [c.path, c.runs]),
        [["afterEachMigrate__1ok.json", 1], ["afterEachMigrate__2fail.json", undefined]],
      );
      const files = run.report!.connections[0].files;
      assert.deepEqual(files.map((f) => [f.path, f.action, f.result]), [
        ["V1__a.json", "apply", "sent"],
        ["V2__b.json", "apply", undefined],
      ]);
      assert.equal(run.report!.connections[0].applied, 1);
      assert.equal((await os("HEAD", `/${ws.id}-a`)).status, 200);
      assert.deepEqual(await recordedPaths(ws), ["V1__a.json"]);
      // The next run applies V2, and stops the same way: its progress shows the file as it shows
      // any file that ran.
      const human = await ws.run();
      assert.equal(human.code, 1);
      assert.match(human.out + human.err, /\[1\/1\] apply V2__b\.json .*\(sent/);
      assert.deepEqual(await recordedPaths(ws), ["V1__a.json", "V2__b.json"]);
    } finally {
      for (const index of [ws.recordsIndex, `${ws.id}-a`, `${ws.id}-b`]) {
        await os("DELETE", `/${index}`);
      }
    }
  });
});
