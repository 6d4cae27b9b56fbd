// The baseline's marker record on a search connection, against the real node: the versions
// `baseline` adopted read as baselined, and `undo` stops above them, as on SQL connections.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { os, Workspace } from "./cluster.ts";

const NO_REPLICAS = { settings: { number_of_replicas: 0 } };

describe("baseline and undo on a search connection", () => {
  it("shows the adopted versions as baselined, and undo stops at the newest, naming it", async () => {
    await using ws = await Workspace.create();
    // V1 and V2 were made by hand before Thaw ran.
    for (const name of ["a", "b"]) {
      assert.equal((await os("PUT", `/${ws.id}-${name}`, NO_REPLICAS)).status, 200);
    }
    await ws.file("V1__a.json", { method: "PUT", path: `/${ws.id}-a`, body: NO_REPLICAS });
    await ws.file("V2__b.json", { method: "PUT", path: `/${ws.id}-b`, body: NO_REPLICAS });
    await ws.file("U2__b.json", { method: "DELETE", path: `/${ws.id}-b` });
    await ws.file("V3__c.json", { method: "PUT", path: `/${ws.id}-c`, body: NO_REPLICAS });
    await ws.file("U3__c.json", { method: "DELETE", path: `/${ws.id}-c` });
    await ws.ok("baseline", "--version", "2");
    await ws.ok();
    const status = await ws.ok("status", "--json");
    assert.deepEqual(
      status.report!.connections[0].files.map((f) => `${f.path}:${f.baselined ?? false}`),
      ["V1__a.json:true", "V2__b.json:true", "V3__c.json:false"],
    );
    await ws.ok("undo");
    assert.equal((await os("HEAD", `/${ws.id}-c`)).status, 404);
    const refused = await ws.run("undo", "--json");
    assert.equal(refused.code, 1, refused.out);
    assert.equal(refused.report!.error!.kind, "plan");
    assert.equal(refused.report!.error!.file, "V2__b.json");
    assert.match(refused.report!.error!.message, /baseline \(version 2/);
    assert.equal((await os("HEAD", `/${ws.id}-b`)).status, 200, "the adopted index stays");
  });
});
