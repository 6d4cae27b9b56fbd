// Which undo file may undo which versioned file on a search connection, from the files alone:
// a reindex undo file only a reindex that kept the index to go back into. Pure.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rawContentHash } from "../../../src/migrate/files/content_hash.ts";
import { planCodeFile } from "../../../src/migrate/code/plan_code_file.ts";
import { planSearchFile } from "../../../src/migrate/search/plan/plan_search_file.ts";
import { searchUndoRefusal } from "../../../src/migrate/search/search_undo.ts";
import type { SearchPlannedFile } from "../../../src/migrate/search/search_file.ts";

async function planned(path: string, content: unknown): Promise<SearchPlannedFile> {
  const bytes = new TextEncoder().encode(JSON.stringify(content));
  return await planSearchFile({ path, bytes, hash: await rawContentHash(bytes) }, undefined);
}

// A migration in code, given as an app bundles it: nothing is imported.
function code(): Promise<SearchPlannedFile> {
  return planCodeFile(
    { path: "V2__fill.ts", bytes: new Uint8Array(), hash: "h" },
    { default: () => {} },
  );
}

describe("searchUndoRefusal", () => {
  it("takes any undo file that is no reindex: its author makes it right", async () => {
    const index = await planned("V2__b.json", { method: "PUT", path: "/b" });
    const remove = await planned("U2__b.json", { method: "DELETE", path: "/b" });
    const reindex = await planned("V2__people-reindex.json", { alias: "people", index: "u2" });
    assert.equal(searchUndoRefusal(index, remove), undefined);
    assert.equal(searchUndoRefusal(reindex, remove), undefined);
    assert.equal(searchUndoRefusal(await code(), remove), undefined);
    assert.equal(searchUndoRefusal(index, await code()), undefined);
  });

  it("refuses a reindex undo file beside a file that is no reindex, naming that file", async () => {
    const back = await planned("U2__people-reindex.json", { alias: "people", index: "users" });
    const index = await planned("V2__b.json", { method: "PUT", path: "/b" });
    assert.match(searchUndoRefusal(index, back) ?? "", /V2__b\.json is no reindex file/);
    assert.match(searchUndoRefusal(await code(), back) ?? "", /V2__fill\.ts is no reindex file/);
  });

  it("refuses to undo a reindex that deleted its source, naming the setting", async () => {
    const back = await planned("U2__people-reindex.json", { alias: "people", index: "users" });
    const kept = await planned("V2__people-reindex.json", { alias: "people", index: "users-v2" });
    const deleted = await planned("V2__people-reindex.json", {
      alias: "people",
      index: "users-v2",
      delete_source: true,
    });
    assert.equal(searchUndoRefusal(kept, back), undefined);
    assert.match(
      searchUndoRefusal(deleted, back) ?? "",
      /^cannot undo V2__people-reindex\.json: .*"delete_source"/,
    );
  });
});
