import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { OPENSEARCH_URL, os, type Run, Workspace } from "../cluster.ts";
import { type FaultServer, type Received, startFaultServer } from "../fault_server.ts";

// A create the cluster is slow to finish (it waits for its shards while the cluster recovers):
// every host takes it and none answers within the timeout. Sending it again does no harm, so it
// went to each host in turn; their silence says nothing of whether it landed.
describe("a write every host took and none answered", () => {
  // The records index's creation and a template's: sent on to the node, which applies them, and
  // never answered.
  const swallowed = (r: Received) =>
    r.method === "PUT" && (/^\/fm_t[0-9a-f]{8}$/.test(r.path) || r.path.includes("slow"));
  let hosts: FaultServer[];
  before(async () => {
    hosts = [
      await startFaultServer(OPENSEARCH_URL, (r) => swallowed(r) ? "swallow" : "forward"),
      await startFaultServer(OPENSEARCH_URL, (r) => swallowed(r) ? "swallow" : "forward"),
    ];
  });
  after(async () => {
    for (const host of hosts) await host.close();
  });

  async function workspace(migrations = ""): Promise<Workspace> {
    return await Workspace.create({
      hosts: hosts.map((h) => h.url),
      settings: "    timeout: 10\n",
      migrations,
    });
  }

  // The hosts of `ws` replaced by the node itself, which answers (nothing hangs: a timeout the
  // node beats even when loaded).
  async function throughTheNode(ws: Workspace): Promise<Run> {
    const config = join(ws.configDir, "application.yml");
    const text = await readFile(config, "utf8");
    await writeFile(
      config,
      text.replace(/hosts: \[[^\]]*\]/, `hosts: ["${OPENSEARCH_URL}"]`)
        .replace(/^( *)timeout: 10$/m, "$1timeout: 30"),
    );
    return await ws.run("--json");
  }

  function assertSaysUnknown(message: string, request: string): void {
    assert.ok(message.includes(`${request}: every host took it and none answered`), message);
    for (const host of hosts) assert.ok(message.includes(`${host.url}: no answer within 10 s`));
    assert.match(message, /the cluster may still apply it: whether it was applied is unknown/);
    assert.match(message, /run again/);
  }

  it("the records index's creation: named, said to be unknown, and a new run goes on from what landed", async () => {
    await using ws = await workspace();
    try {
      await ws.file(`${ws.id}-a-template.json`, { index_patterns: [`${ws.id}-a*`] });
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      assert.equal(run.report!.error!.kind, "failure");
      assertSaysUnknown(run.report!.error!.message, `PUT /${ws.recordsIndex}`);
      const sent = (r: Received) => r.method === "PUT" && r.path === `/${ws.recordsIndex}`;
      for (const host of hosts) assert.equal(host.received.filter(sent).length, 1);
      // What the message says to do holds: the node did create it; a run reads it and goes on.
      await hosts[1].waitForUpstream(sent);
      assert.equal((await os("HEAD", `/${ws.recordsIndex}`)).status, 200);
      const again = await throughTheNode(ws);
      assert.equal(again.code, 0, again.out + again.err);
      assert.equal(again.report!.connections[0].applied, 1);
    } finally {
      await os("DELETE", `/${ws.recordsIndex}`);
      await os("DELETE", `/_index_template/${ws.id}-a`);
    }
  });

  it("a template's: named with its placeholder values masked, and applied again by a new run", async () => {
    const value = `slow${crypto.randomUUID().slice(0, 8)}`;
    await using ws = await workspace(`      placeholders:\n        name: ${value}\n`);
    try {
      // The records index first, through the node: only the template's PUT goes unanswered.
      await os("PUT", `/${ws.recordsIndex}`, {});
      await ws.file(`${value}-template.json`, { index_patterns: [`${value}*`] });
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.request, "PUT /_index_template/${name}");
      assertSaysUnknown(error.reason!, "PUT /_index_template/${name}");
      assert.ok(!error.reason!.includes(value), error.reason);
      assert.equal(run.report!.connections[0].files[0].result, "failed");
      const again = await throughTheNode(ws);
      assert.equal(again.code, 0, again.out + again.err);
      assert.equal(again.report!.connections[0].applied, 1);
    } finally {
      await os("DELETE", `/${ws.recordsIndex}`);
      await os("DELETE", `/_index_template/${value}`);
    }
  });
});
