import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { os, Workspace, writes } from "./cluster.ts";

describe("a migration file name with a control character", () => {
  it("stops the run before anything is sent, naming the file with the character escaped", async () => {
    await using ws = await Workspace.create();
    await ws.file("V1__ok.json", { method: "GET", path: "/_cluster/health" });
    await ws.file("V2__logs\n-index.json", { settings: {} });
    const json = await ws.run("--json");
    assert.equal(json.code, 1);
    assert.equal(json.report!.error!.kind, "plan");
    assert.equal(json.report!.error!.file, "V2__logs\\u000a-index.json");
    assert.match(
      json.report!.error!.message,
      /^connection "[^"]+": V2__logs\\u000a-index\.json: has a control character \(U\+000A\) in its name: rename it.*\(nothing was sent\)$/,
    );
    const human = await ws.run();
    assert.equal(human.code, 1);
    assert.match(human.err, /V2__logs\\u000a-index\.json: has a control character/);
    // Nothing applied, not even the valid file before it: its records index was never made.
    assert.deepEqual([...writes(json.sent), ...writes(human.sent)], []);
    assert.equal((await os("HEAD", `/${ws.recordsIndex}`)).status, 404);
  });
});
