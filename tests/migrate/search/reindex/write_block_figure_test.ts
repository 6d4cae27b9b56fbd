// How long a reindex blocked writes, as it reports it: from the moment it asked for the block (the
// block may land long before its answer comes) to the swap, or to the lift of a run that failed,
// or to the end of a run that leaves it set. Through a fault server in front of the real node.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordId } from "../../../../src/migrate/search/history/migration_record.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { type Fault, type FaultServer, type Received, startFaultServer } from "../fault_server.ts";
import { UndoRuns } from "./undo_runs.ts";

/** Creates `index` holding `count` documents (one shard), with `alias` on it as write index. */
async function seed(index: string, alias: string, count: number): Promise<void> {
  const created = await os("PUT", `/${index}`, {
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    aliases: { [alias]: { is_write_index: true } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    lines.push(JSON.stringify({ create: { _id: `s${n}` } }), JSON.stringify({ n }));
  }
  const bulk = await os("POST", `/${index}/_bulk?refresh=true`, lines.join("\n") + "\n");
  assert.equal(bulk.body.errors, false);
}

async function blocked(index: string): Promise<boolean> {
  const settings = await os("GET", `/${index}/_settings/index.blocks.write`);
  return settings.body[index]?.settings?.index?.blocks?.write === "true";
}

const NEW_INDEX = { settings: { number_of_shards: 1, number_of_replicas: 0 } };
const isSwap = (r: Received) => r.method === "POST" && r.path.startsWith("/_aliases?");

interface Reindex {
  readonly ws: Workspace;
  readonly alias: string;
  readonly users: string;
  readonly runs: UndoRuns;
  readonly fault: FaultServer;
}

/**
 * `<id>-people` on `<id>-users` (100 documents), and a reindex to `<id>-users-v2` to run through a
 * fault server whose rule is `rule(users)`; `test` gets them, and everything is deleted after.
 */
async function withReindex(
  rule: (users: string) => (r: Received) => Fault,
  test: (r: Reindex) => Promise<void>,
): Promise<void> {
  await using ws = await Workspace.create();
  const [alias, users, v2] = [`${ws.id}-people`, `${ws.id}-users`, `${ws.id}-users-v2`];
  await seed(users, alias, 100);
  const fault = await startFaultServer(OPENSEARCH_URL, rule(users));
  try {
    const runs = new UndoRuns(ws.connection(fault.url), alias, users, v2);
    await test({ ws, alias, users, runs, fault });
  } finally {
    await fault.close();
    await os("PUT", `/${users}/_settings`, { "index.blocks.write": null });
    for (const index of [ws.recordsIndex, users, v2]) await os("DELETE", `/${index}`);
  }
}

/** The alias is on `index` only. */
async function aliasOn(alias: string): Promise<string[]> {
  return Object.keys((await os("GET", `/_alias/${alias}`)).body ?? {});
}

describe("how long a reindex blocked writes", () => {
  it("counts from when the block was asked for, though its answer came late", async () => {
    let answer!: () => void;
    const late = new Promise<void>((resolve) => answer = resolve);
    const isBlock = (r: Received) => r.method === "PUT" && r.path.endsWith("/_block/write");
    await withReindex(
      () => (r) => isBlock(r) ? { answerAfter: late } : "forward",
      async ({ ws, alias, users, runs, fault }) => {
        const run = runs.runForward(NEW_INDEX);
        const stopped = await Promise.race([
          fault.waitForUpstream(isBlock).then(() => "blocked"),
          run.then(() => "ended", () => "ended"),
        ]);
        assert.equal(stopped, "blocked", "the run reached its block");
        // The block is on the cluster, its answer held: writers are refused from now on.
        const write = await os("PUT", `/${alias}/_doc/late`, { n: -1 });
        assert.equal(write.status, 403, JSON.stringify(write.body));
        // The run noted when it asked for the block, before its answer.
        const id = await recordId(ws.id, `${ws.id}/V3__people-reindex.json`);
        const progress = await os("GET", `/${ws.recordsIndex}/_doc/reindex-${id}`);
        const blockedAt = Date.parse(progress.body?._source?.blocked_at);
        assert.ok(!Number.isNaN(blockedAt), `no blocked_at: ${JSON.stringify(progress.body)}`);
        const answeredAt = Date.now();
        answer();
        const done = await run;
        assert.equal(done.result, "reindexed");
        const figure = done.reindex.writeBlockedMs ?? -1;
        assert.ok(
          figure >= answeredAt - blockedAt,
          `writes blocked ${figure} ms, but the block was on for ${answeredAt - blockedAt} ms ` +
            `before its answer`,
        );
        assert.equal(await blocked(users), true, "the source stays blocked after the swap");
      },
    );
  });

  it("of a run that failed after its block: how long, until the block was lifted", async () => {
    const refusal = { type: "illegal_argument_exception", reason: "refused by the test" };
    await withReindex(
      () => (r) => isSwap(r) ? { status: 400, body: { error: refusal, status: 400 } } : "forward",
      async ({ alias, users, runs }) => {
        await assert.rejects(runs.runForward(NEW_INDEX), (error: Error) => {
          assert.match(error.message, /refused by the test/);
          assert.match(
            error.message,
            new RegExp(`writes to ${users} were blocked \\d+\\.\\d s, until the block was lifted`),
          );
          return true;
        });
        assert.equal(await blocked(users), false);
        assert.deepEqual(await aliasOn(alias), [users]);
      },
    );
  });

  it("says when not every node applied the swap: writes through such a node wait past the figure", async () => {
    await withReindex(
      // The swap lands, but the answer says a node did not acknowledge it in time.
      () => (r) =>
        isSwap(r) ? { status: 200, body: { acknowledged: false }, forwarded: true } : "forward",
      async ({ alias, users, runs }) => {
        const done = await runs.runForward(NEW_INDEX);
        assert.equal(done.result, "reindexed");
        const line = runs.said.find((l) => l.startsWith(`reindex: alias ${alias} moved to`));
        assert.match(line ?? runs.said.join("\n"), /writes through it blocked \d+\.\d s/);
        assert.match(line ?? "", /not every node applied the move within \d+\.\d s/);
        assert.equal(await blocked(users), true);
      },
    );
  });

  it("of a run that ends with its block still set: how long so far, and that it is set", async () => {
    await withReindex(
      () => (r) => isSwap(r) ? { status: 502, text: "bad gateway" } : "forward",
      async ({ alias, users, runs }) => {
        await assert.rejects(runs.runForward(NEW_INDEX), (error: Error) => {
          assert.match(
            error.message,
            new RegExp(
              `writes to ${users} are still blocked, \\d+\\.\\d s since the block was set`,
            ),
          );
          return true;
        });
        assert.equal(await blocked(users), true);
        assert.deepEqual(await aliasOn(alias), [users]);
      },
    );
  });
});
