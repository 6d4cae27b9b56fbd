import assert from "node:assert/strict";
import { hostname } from "node:os";
import process from "node:process";
import { describe, it } from "node:test";
import { processGone } from "../../../src/migrate/local_process.ts";
import { migrate, MigrationRunError } from "../../../migrate.ts";
import { startCli } from "../cli_process.ts";
import { runCaptured } from "../run_cli.ts";
import { OPENSEARCH_URL, os, type Sent, Workspace, writes } from "./cluster.ts";
import { type Received, startFaultServer } from "./fault_server.ts";

// Migrations in code beside JSON files on a search connection: a `.ts` or `.js` file whose default
// export is given `ctx.request`, through the connection's own client.

interface Hit {
  readonly _id: string;
  readonly _version: number;
  readonly _source: Record<string, unknown>;
}

/** The documents of `index`, by id, refreshed first. */
async function docs(index: string): Promise<Map<string, Hit>> {
  await os("POST", `/${index}/_refresh`);
  const found = await os("POST", `/${index}/_search`, { size: 100, version: true });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return new Map(found.body.hits.hits.map((h: Hit) => [h._id, h]));
}

/** The records `ws`'s records index holds for `path` (its lock is no record). */
async function records(ws: Workspace, path: string): Promise<Record<string, unknown>[]> {
  await os("POST", `/${ws.recordsIndex}/_refresh`);
  const found = await os("POST", `/${ws.recordsIndex}/_search`, {
    size: 100,
    query: { term: { migration_path: path } },
  });
  assert.equal(found.status, 200, JSON.stringify(found.body));
  return found.body.hits.hits.map((h: Hit) => h._source);
}

/** Creates `index` with one replica less than a one-node cluster lacks. */
function createIndex(index: string): Promise<unknown> {
  return os("PUT", `/${index}`, { settings: { number_of_replicas: 0 } });
}

async function cleanUp(ws: Workspace, ...indices: string[]): Promise<void> {
  for (const index of [ws.recordsIndex, ...indices]) await os("DELETE", `/${index}`);
}

// Re-tags the documents tagged "old" with one `_update_by_query` (OpenSearch and Elasticsearch 7
// alike), typed as a TypeScript migration is.
const RETAG = (index: string) =>
  `type Ctx = {
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  log(message: string): void;
};

export default async (ctx: Ctx): Promise<void> => {
  const answer = await ctx.request<{ updated: number }>(
    "POST",
    "/${index}/_update_by_query?refresh=true",
    {
      script: { source: "ctx._source.tag = params.tag", lang: "painless", params: { tag: "new" } },
      query: { term: { tag: "old" } },
    },
  );
  ctx.log(\`retagged \${answer.updated}\`);
};
`;

describe("search migrations in code", () => {
  it("re-tags documents once, is recorded once as CODE, skipped on the next run, changed when edited", async () => {
    await using ws = await Workspace.create();
    const index = `${ws.id}-items`;
    try {
      await ws.file("V1__items.json", {
        method: "PUT",
        path: `/${index}`,
        body: {
          settings: { number_of_replicas: 0 },
          mappings: { properties: { tag: { type: "keyword" }, n: { type: "integer" } } },
        },
      });
      const seed = [["a", "old"], ["b", "old"], ["c", "keep"]];
      for (const [i, [id, tag]] of seed.entries()) {
        await ws.file(`V${i + 2}__doc-${id}.json`, {
          method: "PUT",
          path: `/${index}/_doc/${id}?refresh=true`,
          body: { n: i, tag },
        });
      }
      await ws.file("V5__retag.ts", RETAG(index));

      const first = await ws.ok("--json");
      const files = first.report!.connections[0].files;
      const retag = files.find((f) => f.path === "V5__retag.ts")!;
      assert.deepEqual([retag.action, retag.result, retag.code], ["apply", "sent", true]);
      assert.equal(first.report!.connections[0].applied, 5);
      const update = (s: Sent) => s.method === "POST" && s.path.includes("/_update_by_query");
      assert.deepEqual(first.sent.filter(update), [{
        method: "POST",
        path: `/${index}/_update_by_query?refresh=true`,
      }]);

      const after = await docs(index);
      assert.deepEqual(
        [...after.values()].map((h) => [h._id, h._source.tag, h._version]).sort(),
        [["a", "new", 2], ["b", "new", 2], ["c", "keep", 1]],
      );
      const recorded = await records(ws, "V5__retag.ts");
      assert.equal(recorded.length, 1, JSON.stringify(recorded));
      assert.deepEqual(recorded[0].request, { method: "CODE", path: "V5__retag.ts" });
      assert.equal(recorded[0].connection, ws.id);

      // Skipped: none of its code runs, so none of its requests is sent.
      const second = await ws.ok("--json");
      assert.equal(
        second.report!.connections[0].files.find((f) => f.path === "V5__retag.ts")!.action,
        "skip",
      );
      assert.deepEqual(second.sent.filter(update), []);
      assert.deepEqual(writes(second.sent).filter((s) => s.path.startsWith(`/${index}`)), []);
      assert.deepEqual(
        [...(await docs(index)).values()].map((h) => [h._id, h._version]).sort(),
        [["a", 2], ["b", 2], ["c", 1]],
      );
      assert.equal((await records(ws, "V5__retag.ts")).length, 1);

      // Edited: reported as changed by status, and not run by it.
      await ws.file("V5__retag.ts", RETAG(index).replace('"new"', '"newer"'));
      const status = await ws.ok("status", "--json");
      assert.equal(
        status.report!.connections[0].files.find((f) => f.path === "V5__retag.ts")!.action,
        "changed",
      );
      assert.deepEqual(status.sent.filter(update), []);
      assert.match((await ws.ok("status")).out, /changed\s+V5__retag\.ts \(code\)/);
      assert.equal((await docs(index)).get("a")!._source.tag, "new");
    } finally {
      await cleanUp(ws, index);
    }
  });

  it("an uncaught 4xx of ctx.request fails the run naming the line of its await and the status; the file is not recorded", async () => {
    await using ws = await Workspace.create();
    const index = `${ws.id}-items`;
    const missing = `${ws.id}-missing`;
    try {
      await ws.file("V1__items.json", {
        method: "PUT",
        path: `/${index}`,
        body: { settings: { number_of_replicas: 0 } },
      });
      // A 404 caught by the code is the code's business: it goes on. The next one is not caught.
      await ws.file(
        "V2__lookup.ts",
        `type Ctx = {
  request(method: string, path: string, body?: unknown): Promise<unknown>;
  log(message: string): void;
};
export default async (ctx: Ctx): Promise<void> => {
  try {
    await ctx.request("GET", "/${missing}/_doc/1");
  } catch (error) {
    ctx.log(\`caught status \${(error as { status: number }).status}\`);
  }
  await ctx.request("PUT", "/${index}/_doc/1?refresh=true", { n: 1 });
  await ctx.request("GET", "/${missing}/_doc/2");
  await ctx.request("PUT", "/${index}/_doc/2?refresh=true", { n: 2 });
};
`,
      );
      const AWAIT_LINE = 12;

      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.kind, "failure");
      assert.equal(error.file, "V2__lookup.ts");
      assert.equal(error.line, AWAIT_LINE, error.message);
      assert.match(
        error.message,
        new RegExp(
          `file V2__lookup\\.ts:${AWAIT_LINE}: SearchRequestError: GET /${missing}/_doc/2: HTTP 404: `,
        ),
      );
      assert.match(error.message, /no such index/);
      const files = run.report!.connections[0].files;
      assert.deepEqual(files.map((f) => [f.path, f.result]), [
        ["V1__items.json", "sent"],
        ["V2__lookup.ts", "failed"],
      ]);
      // What ran before the failure stays; what came after it never ran.
      assert.deepEqual([...(await docs(index)).keys()], ["1"]);
      assert.deepEqual(await records(ws, "V2__lookup.ts"), []);
      assert.equal((await records(ws, "V1__items.json")).length, 1);

      // The human output says the same on stderr, and the caught status was logged before it.
      const human = await ws.run();
      assert.equal(human.code, 1);
      assert.match(human.out + human.err, /caught status 404/);
      assert.match(human.err, new RegExp(`file V2__lookup\\.ts:${AWAIT_LINE}: .*HTTP 404`));
      assert.deepEqual(await records(ws, "V2__lookup.ts"), []);
    } finally {
      await cleanUp(ws, index);
    }
  });

  it("does not send a write again to the next host after the first took it and never answered", async () => {
    let index = "";
    const post = (r: { method: string; path: string }) =>
      r.method === "POST" && r.path.startsWith(`/${index}/_doc`);
    // Forwards the code's POST to the node, which applies it, and never answers it.
    const silent = await startFaultServer(OPENSEARCH_URL, (r) => post(r) ? "swallow" : "forward");
    await using ws = await Workspace.create({
      hosts: [silent.url, OPENSEARCH_URL],
      // Only the silent host must exceed it: every other request is answered by the node.
      settings: "    timeout: 10\n",
    });
    index = `${ws.id}-lost`;
    try {
      await createIndex(index);
      await ws.file(
        "V1__post.js",
        `export default async (ctx) => {\n  await ctx.request("GET", "/${index}/_count");\n` +
          `  await ctx.request("POST", "/${index}/_doc?refresh=true", { n: 1 });\n};\n`,
      );
      const run = await ws.run("--json");
      assert.equal(run.code, 1, run.out + run.err);
      const error = run.report!.error!;
      assert.equal(error.file, "V1__post.js");
      assert.equal(error.line, 3, error.message);
      assert.ok(error.message.includes(`POST /${index}/_doc: ${silent.url}`), error.message);
      assert.match(error.message, /no answer within 10 s/);
      assert.match(error.message, /may or may not have been applied/);
      assert.equal(run.report!.connections[0].files[0].result, "failed");

      // Sent once, to the silent host alone: the runner never sent it to the node.
      assert.equal(run.sent.filter(post).length, 1, JSON.stringify(run.sent));
      assert.equal(silent.received.filter(post).length, 1);
      await silent.waitForUpstream(post);
      assert.equal(
        (await os("GET", `/${index}/_count`)).body.count,
        1,
        "the node holds the one document the silent host passed on",
      );
      assert.deepEqual(await records(ws, "V1__post.js"), []);
    } finally {
      await silent.close();
      await cleanUp(ws, index);
    }
  });

  it("a runner killed in the middle of a code file: the next run takes its lock over and runs the file again", async () => {
    // The first PUT of document "a" is applied on the node and never answered: the runner is
    // killed with the code file in flight, however loaded the machine.
    let held: number | undefined;
    let index = "";
    const host = await startFaultServer(OPENSEARCH_URL, (r: Received) => {
      if (r.method === "PUT" && r.path.startsWith(`/${index}/_doc/a`)) held ??= r.n;
      return r.n === held ? "swallow" : "forward";
    });
    await using ws = await Workspace.create({ hosts: [host.url] });
    index = `${ws.id}-docs`;
    try {
      await ws.file("V1__docs.json", {
        method: "PUT",
        path: `/${index}`,
        body: { settings: { number_of_replicas: 0 } },
      });
      await ws.file(
        "V2__fill.js",
        "export default async (ctx) => {\n" +
          `  await ctx.request("PUT", "/${index}/_doc/a?refresh=true", { n: 1 });\n` +
          `  await ctx.request("PUT", "/${index}/_doc/b?refresh=true", { n: 2 });\n};\n`,
      );
      const runner = startCli(["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root]);
      try {
        await host.waitForUpstream((r) => r.n === held);
      } finally {
        runner.signal("SIGKILL");
        await runner.closed;
      }
      assert.deepEqual([...(await docs(index)).keys()], ["a"]);

      // The dead runner's lock is still there, naming this host and its pid; the file, no record.
      const lock = await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`);
      assert.equal(lock.status, 200);
      assert.equal(lock.body._source.host, hostname());
      assert.equal(lock.body._source.pid, runner.child.pid);
      assert.equal((await records(ws, "V1__docs.json")).length, 1);
      assert.deepEqual(await records(ws, "V2__fill.js"), []);

      const rerun = await runCaptured(
        ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, "--json", "--lock-timeout", "0"],
        { identity: { host: hostname(), pid: process.pid, processGone } },
      );
      assert.equal(rerun.code, 0, rerun.out + rerun.err);
      const report = JSON.parse(rerun.out);
      const { applied, skipped, files } = report.connections[0];
      assert.deepEqual({ applied, skipped }, { applied: 1, skipped: 1 });
      assert.deepEqual(
        files.map((f: { path: string; action: string }) => [f.path, f.action]),
        [["V1__docs.json", "skip"], ["V2__fill.js", "apply"]],
      );

      const recorded = await records(ws, "V2__fill.js");
      assert.equal(recorded.length, 1);
      assert.deepEqual(recorded[0].request, { method: "CODE", path: "V2__fill.js" });
      // "a" was written by the killed run and again by the next; "b" once, by the next.
      assert.deepEqual(
        [...(await docs(index)).values()].map((h) => [h._id, h._version]).sort(),
        [["a", 2], ["b", 1]],
      );
      assert.equal((await os("GET", `/${ws.recordsIndex}/_doc/lock-${ws.id}`)).status, 404);
    } finally {
      await host.close();
      await cleanUp(ws, index);
    }
  });

  for (const honours of [false, true]) {
    it(`a code file ${honours ? "that honours ctx.signal" : "that never settles"} when the run is interrupted: reported interrupted, not recorded`, async () => {
      await using ws = await Workspace.create();
      const index = `${ws.id}-items`;
      try {
        await ws.file(
          "V1__wait.js",
          `export default async (ctx) => {
  await ctx.request("PUT", "/${index}/_doc/1?refresh=true", { n: 1 });
  ctx.log("waiting for the signal");
  await new Promise((_, reject) => {
    ${
            honours
              ? `const stop = () => reject(new Error("stopped at a safe point"));
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener("abort", stop);`
              : ""
          }
  });
};
`,
        );
        const stop = new AbortController();
        const error = await migrate({
          mode: "search",
          config: ws.configDir,
          migrations: ws.root,
          signal: stop.signal,
          stopTimeoutMs: 0,
          onProgress: (line) => {
            if (line.includes("waiting for the signal")) stop.abort();
          },
        }).then(() => undefined, (thrown: unknown) => thrown);
        assert.ok(error instanceof MigrationRunError, String(error));
        assert.equal(error.kind, "interrupted", error.message);
        assert.equal(error.file, "V1__wait.js");
        assert.match(
          error.message,
          honours ? /stopped at a safe point/ : /did not stop within 0 s of the interruption/,
        );
        assert.deepEqual(await records(ws, "V1__wait.js"), []);
      } finally {
        await cleanUp(ws, index);
      }
    });
  }

  it("a dry run says it would run the code and runs none of it; status says (code); ctx.log masks placeholder values", async () => {
    const value = `s3cr3t${crypto.randomUUID().slice(0, 8)}`;
    await using ws = await Workspace.create({
      migrations: `      placeholders:\n        tenant: ${value}\n`,
    });
    const index = `${ws.id}-items`;
    try {
      await ws.file("V1__items.json", {
        method: "PUT",
        path: `/${index}`,
        body: { settings: { number_of_replicas: 0 } },
      });
      await ws.file(
        "V2__log.js",
        "export default async (ctx) => {\n" +
          "  ctx.log(`${ctx.connection} ${ctx.path} tenant is ${ctx.placeholders.tenant}`);\n" +
          `  await ctx.request("PUT", "/${index}/_doc/1?refresh=true", { tenant: ctx.placeholders.tenant });\n` +
          '  if (!(ctx.signal instanceof AbortSignal)) throw new Error("no signal");\n};\n',
      );

      const dry = await ws.ok("--dry-run");
      assert.match(dry.out, /apply\s+V2__log\.js \(would run code\)/);
      assert.match(dry.out, /apply\s+V1__items\.json(?! \()/);
      assert.doesNotMatch(dry.out + dry.err, /tenant is/);
      assert.deepEqual(writes(dry.sent), []);
      const dryJson = await ws.ok("--dry-run", "--json");
      const planned = dryJson.report!.connections[0].files;
      assert.deepEqual(planned.map((f) => [f.path, f.action, f.code]), [
        ["V1__items.json", "apply", undefined],
        ["V2__log.js", "apply", true],
      ]);

      const pending = await ws.ok("status");
      assert.match(pending.out, /pending\s+V2__log\.js \(code\)/);
      assert.doesNotMatch(pending.out, /would run code/);
      assert.equal((await os("HEAD", `/${index}`)).status, 404);

      const run = await ws.ok();
      const output = run.out + run.err;
      assert.match(
        output,
        new RegExp(`${ws.id} {3}${ws.id} V2__log\\.js tenant is \\$\\{tenant\\}`),
        output,
      );
      assert.ok(!output.includes(value), output);
      // The code was given the value itself.
      assert.equal((await docs(index)).get("1")!._source.tenant, value);

      const applied = await ws.ok("status");
      assert.match(applied.out, /applied\s+V2__log\.js \(code\)/);
      assert.doesNotMatch(applied.out, /would run code/);
    } finally {
      await cleanUp(ws, index);
    }
  });

  it("a request the code did not await before it returned is refused, not sent after its record", async () => {
    await using ws = await Workspace.create();
    const index = `${ws.id}-late`;
    try {
      await ws.file(
        "V1__late.js",
        "export default (ctx) => { globalThis.thawLateRequest = ctx.request; };\n",
      );
      await ws.ok();
      const late = (globalThis as { thawLateRequest?: (m: string, p: string) => Promise<unknown> })
        .thawLateRequest!;
      delete (globalThis as { thawLateRequest?: unknown }).thawLateRequest;
      await assert.rejects(
        late("PUT", `/${index}`),
        /ctx\.request was called after the migration returned: await every request/,
      );
      assert.equal((await os("HEAD", `/${index}`)).status, 404);
    } finally {
      await cleanUp(ws, index);
    }
  });
});
