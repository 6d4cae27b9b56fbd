import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { MigrationFileError } from "../../../../src/migrate/migration_error.ts";
import { planRequest } from "../../../../src/migrate/search/plan/plan_request.ts";
import { os, Workspace } from "../cluster.ts";

describe("template names against a real OpenSearch node", () => {
  // The node is shared and has a shard limit: the records indices go at the end.
  const made: string[] = [];
  after(async () => {
    for (const index of made.splice(0)) await os("DELETE", `/${index}`);
  });
  async function workspace(): Promise<Workspace> {
    const ws = await Workspace.create();
    made.push(ws.recordsIndex);
    return ws;
  }

  it("plans exactly the names the node takes", async () => {
    await using ws = await workspace();
    const tricky = ["Foo", "a b", "a#b", "a*b", "a,b", "_a", "-a", "+a", ".a", "a?b", "a:b", 'a"b'];
    tricky.push("a\\b", "a<b", "a|b", "été", "ÉTÉ", "Mixed Case");
    for (const [i, head] of tricky.entries()) {
      const stem = `${head}-${ws.id}`;
      const doc = { index_patterns: [`${ws.id}-${i}-x*`] };
      const path = `${stem}-template.json`;
      let planned;
      try {
        planned = planRequest(path, new TextEncoder().encode(JSON.stringify(doc)));
      } catch (error) {
        assert.ok(error instanceof MigrationFileError, String(error));
      }
      if (planned) {
        const put = await os("PUT", planned.path, planned.body);
        assert.equal(put.status, 200, `${stem}: ${JSON.stringify(put.body)}`);
        assert.equal((await os("DELETE", planned.path)).status, 200);
      } else {
        const name = encodeURIComponent(stem.toLowerCase());
        const put = await os("PUT", `/_index_template/${name}`, doc);
        assert.equal(put.status, 400, `${stem} was refused, but the node takes it`);
        assert.equal(put.body.error.type, "invalid_index_template_exception");
      }
    }
  });

  it("refuses a bad template name before sending anything, naming the file and the rule", async () => {
    await using ws = await workspace();
    await ws.file(`1-${ws.id}-good-template.json`, { index_patterns: [`${ws.id}-good*`] });
    await ws.file(`2-${ws.id} logs-template.json`, { index_patterns: [`${ws.id}-logs*`] });
    const run = await ws.run();
    assert.equal(run.code, 1, run.err);
    assert.match(
      run.err,
      new RegExp(`2-${ws.id} logs-template\\.json: .*template name .*must not contain a space`),
    );
    assert.deepEqual(run.sent, []);
    const json = await ws.run("--json");
    assert.equal(json.code, 1);
    assert.equal(json.report!.error?.kind, "plan");
    assert.equal((await os("GET", `/_index_template/1-${ws.id}-good`)).status, 404);
  });

  it("applies a template file named in upper case under its lowercased name", async () => {
    await using ws = await workspace();
    await ws.file(`${ws.id}-Upper-template.json`, { settings: { number_of_shards: 1 } });
    const run = await ws.ok("--json");
    assert.equal(
      run.report!.connections[0].files[0].request,
      `PUT /_index_template/${ws.id}-upper`,
    );
    const got = await os("GET", `/_index_template/${ws.id}-upper`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.index_templates[0].index_template.index_patterns, [
      `${ws.id}-upper*`,
    ]);
    await os("DELETE", `/_index_template/${ws.id}-upper`);
  });
});
