// A runner killed with SIGKILL in the middle of a reindex's undo, at the copy's start and at the
// swap: the next `undo` takes its lock over, finishes, and loses no write made through the alias.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import process from "node:process";
import { describe, it } from "node:test";
import { processGone } from "../../../src/migrate/local_process.ts";
import { startCli } from "../cli_process.ts";
import { runCaptured } from "../run_cli.ts";
import { OPENSEARCH_URL, os, Workspace } from "./cluster.ts";
import { startFaultServer } from "./fault_server.ts";

// Each document's id and email, as the index holds them.
async function contents(index: string): Promise<string[]> {
  await os("POST", `/${index}/_refresh`);
  const found = await os("POST", `/${index}/_search`, { size: 1000, sort: ["_id"] });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body.hits.hits.map((h: { _id: string; _source: { email: string } }) =>
    `${h._id}:${h._source.email}`
  );
}

const STAGES = [
  { name: "the copy's start", request: (path: string) => path.startsWith("/_reindex") },
  { name: "the swap", request: (path: string) => path.startsWith("/_aliases") },
] as const;

describe("a runner killed with SIGKILL during a reindex's undo", () => {
  for (const stage of STAGES) {
    it(`at ${stage.name}: the next undo finishes it, with every write through the alias`, async () => {
      let undoing = false;
      let held: number | undefined;
      const host = await startFaultServer(OPENSEARCH_URL, (r) => {
        if (undoing && r.method === "POST" && stage.request(r.path)) held ??= r.n;
        return r.n === held ? "swallow" : "forward";
      });
      await using ws = await Workspace.create({ hosts: [host.url] });
      const [users, usersV2, people] = [`${ws.id}-users`, `${ws.id}-users-v2`, `${ws.id}-people`];
      const expected = new Map<string, string>();
      const write = async (id: string, email: string | undefined) => {
        const answer = email === undefined
          ? await os("DELETE", `/${people}/_doc/${id}?refresh=true`)
          : await os("PUT", `/${people}/_doc/${id}?refresh=true`, { email });
        assert.ok(answer.status < 300, JSON.stringify(answer.body));
        if (email === undefined) expected.delete(id);
        else expected.set(id, email);
      };
      try {
        await ws.file("V1__users.json", {
          method: "PUT",
          path: `/${users}`,
          body: {
            settings: { number_of_replicas: 0 },
            aliases: { [people]: { is_write_index: true } },
          },
        });
        await ws.file("V2__people-reindex.json", {
          alias: people,
          index: usersV2,
          settings: { number_of_replicas: 0 },
        });
        await ws.file("U2__people-reindex.json", { alias: people, index: users });
        await ws.ok("--target", "1");
        for (let n = 0; n < 40; n++) await write(`d${n}`, `${n}@before`);
        await ws.ok();
        // After the reindex: creates, updates and deletes that only the new index holds.
        for (let n = 30; n < 60; n++) await write(`d${n}`, `${n}@after`);
        for (let n = 0; n < 10; n++) await write(`d${n}`, undefined);

        undoing = true;
        const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "undo"]);
        await host.waitForUpstream((r) => r.n === held);
        runner.signal("SIGKILL");
        await runner.closed;
        // Killed midway: the swap had not happened, or had and the new index was not deleted yet.
        const midway = await os("GET", `/_alias/${people}`);
        assert.deepEqual(Object.keys(midway.body), [stage.name === "the swap" ? users : usersV2]);
        assert.equal((await os("HEAD", `/${usersV2}`)).status, 200);
        // Writes go on through the alias while nobody runs: where the alias is, they are taken.
        if (stage.name === "the copy's start") {
          for (let n = 60; n < 70; n++) await write(`d${n}`, `${n}@killed`);
          await write("d20", undefined);
        }

        const rerun = await runCaptured(
          [
            "-m",
            "search",
            "-c",
            ws.configDir,
            "--sqlPath",
            ws.root,
            "undo",
            "--json",
            "--lock-timeout",
            "0",
          ],
          { identity: { host: hostname(), pid: process.pid, processGone } },
        );
        assert.equal(rerun.code, 0, rerun.out + rerun.err);
        const report = JSON.parse(rerun.out);
        const file = report.connections[0].files.find((f: { path: string }) =>
          f.path === "V2__people-reindex.json"
        );
        assert.equal(file.result, "undone");

        const alias = await os("GET", `/_alias/${people}`);
        assert.deepEqual(Object.keys(alias.body), [users]);
        assert.equal((await os("HEAD", `/${usersV2}`)).status, 404);
        assert.deepEqual(
          await contents(users),
          [...expected].map(([id, email]) => `${id}:${email}`).sort(),
        );
        // The previous index takes writes again, and the undo's progress is forgotten.
        await write("d99", "99@again");
        await os("POST", `/${ws.recordsIndex}/_refresh`);
        const kept = await os("POST", `/${ws.recordsIndex}/_search`, { size: 100 });
        assert.equal(kept.status, 200, JSON.stringify(kept.body));
        const ids = kept.body.hits.hits.map((h: { _id: string }) => h._id);
        assert.deepEqual(ids.filter((id: string) => id.startsWith("reindex-")), []);
        const status = await ws.ok("status", "--json");
        assert.deepEqual(
          status.report!.connections[0].files.map((f) => `${f.path}:${f.action}`),
          ["V1__users.json:skip", "V2__people-reindex.json:undone"],
        );
      } finally {
        for (const index of [ws.recordsIndex, users, usersV2]) await os("DELETE", `/${index}`);
        await host.close();
      }
    });
  }
});
