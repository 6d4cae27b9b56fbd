import assert from "node:assert/strict";
import { hostname } from "node:os";
import process from "node:process";
import { describe, it } from "node:test";
import { processGone } from "../../../src/migrate/local_process.ts";
import { startCli } from "../cli_process.ts";
import { runCaptured } from "../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "./cluster.ts";
import { startFaultServer } from "./fault_server.ts";

const FILES = 200;

describe("a runner killed with SIGKILL in the middle of a run", () => {
  it("leaves a lock the next run on this host takes over at once; every file ends applied once, the one in flight twice", async () => {
    // The runner reaches the node through a host that applies its first PUT of file 061 and never
    // answers it: the runner is killed with that file in flight, however loaded the machine, and
    // never after it has finished. Every other request (the rerun's PUT of 061 too) goes through.
    let held: number | undefined;
    let index = "";
    const host = await startFaultServer(OPENSEARCH_URL, (r) => {
      if (r.method === "PUT" && r.path.startsWith(`/${index}/_doc/061`)) held ??= r.n;
      return r.n === held ? "swallow" : "forward";
    });
    try {
      await using ws = await Workspace.create({ hosts: [host.url] });
      index = `${ws.id}-docs`;
      await os("PUT", `/${index}`, { settings: { number_of_replicas: 0 } });
      // Idempotent files: PUT of a document by id. Applying one twice leaves _version 2.
      for (let n = 1; n <= FILES; n++) {
        const name = String(n).padStart(3, "0");
        await ws.file(`${name}.json`, {
          method: "PUT",
          path: `/${index}/_doc/${name}`,
          body: { n },
        });
      }
      const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root]);
      await runner.printed(/\[60\/200\]/);
      // File 061 is applied on the node and its answer held: the run is in its middle.
      await host.waitForUpstream((r) => r.n === held);
      runner.signal("SIGKILL");
      await runner.closed;

      // The dead runner's lock is still there, naming this host and its pid.
      const lock = await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`);
      assert.equal(lock.status, 200);
      assert.equal(lock.body._source.host, hostname());
      assert.equal(lock.body._source.pid, runner.child.pid);

      // --lock-timeout 0: the lock of a process of this host that is gone is taken over at once.
      const rerun = await runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
        { identity: { host: hostname(), pid: process.pid, processGone } },
      );
      assert.equal(rerun.code, 0, rerun.out);
      const report = JSON.parse(rerun.out);
      // Files 1 to 60 were recorded before the progress line; 061 was applied, never recorded.
      const { applied, skipped } = report.connections[0];
      assert.deepEqual({ applied, skipped }, { applied: FILES - 60, skipped: 60 });

      await os("POST", `/${ws.recordsIndex}/_refresh`);
      const records = await os("POST", `/${ws.recordsIndex}/_search`, {
        size: 1000,
        query: { exists: { field: "migration_path" } },
      });
      const paths = records.body.hits.hits.map((h: { _source: { migration_path: string } }) =>
        h._source.migration_path
      );
      assert.equal(paths.length, FILES);
      assert.equal(new Set(paths).size, FILES);

      await os("POST", `/${index}/_refresh`);
      const docs = await os("POST", `/${index}/_search`, { size: 1000, version: true });
      assert.equal(docs.body.hits.hits.length, FILES);
      // The file in flight, and only it, was applied twice: by the killed run and by the next.
      const twice = docs.body.hits.hits.filter((h: { _version: number }) => h._version > 1);
      assert.deepEqual(twice.map((h: { _id: string }) => h._id), ["061"]);
    } finally {
      await host.close();
    }
  });
});
