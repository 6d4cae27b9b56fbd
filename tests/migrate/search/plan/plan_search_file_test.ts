// A search file as the driver plans it: its checksum (of the canonical JSON, before placeholders),
// the resource it defines, and the request it becomes. Pure.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { rawContentHash } from "../../../../src/migrate/files/content_hash.ts";
import { isMigrationError } from "../../../../src/migrate/migration_error.ts";
import { planSearchFile } from "../../../../src/migrate/search/plan/plan_search_file.ts";
import { propertyOptions } from "../../../property.ts";

async function file(path: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  return { path, bytes, hash: await rawContentHash(bytes) };
}

describe("planSearchFile", () => {
  it("names the resource a template file defines, and the request it sends", async () => {
    const planned = await planSearchFile(
      await file("001-logs.json", '{"index_patterns": ["logs-*"], "template": {}}'),
      undefined,
    );
    assert.equal(planned.resource, "template 001-logs");
    assert.equal(planned.request, "PUT /_index_template/001-logs");
    assert.equal(planned.runOnce, false);
  });

  it("shows which index a reindex undo overwrites; index_uuid only in such an undo", async () => {
    const undo = '{"alias": "hr", "index": "hr-v1", "index_uuid": "abc"}';
    const planned = await planSearchFile(await file("U1__x-reindex.json", undo), undefined);
    assert.equal(planned.request, "POST /_reindex");
    assert.equal(planned.overwrites, "hr-v1");
    assert.equal(planned.searchRequest.reindex?.indexUuid, "abc");
    const forward = await planSearchFile(
      await file("V1__x-reindex.json", '{"alias": "hr", "index": "hr-v2"}'),
      undefined,
    );
    assert.equal(forward.request, "POST /_reindex");
    assert.equal(forward.overwrites, undefined);
    await assert.rejects(
      planSearchFile(await file("V1__x-reindex.json", undo), undefined),
      /V1__x-reindex\.json: gives "index_uuid", which only a reindex undo file/,
    );
  });

  it("takes its checksum before placeholders: a placeholder's value is configuration", async () => {
    const text = '{"index_patterns": ["${prefix}-*"], "template": {}}';
    const a = await planSearchFile(await file("t.json", text), new Map([["prefix", "a"]]));
    const b = await planSearchFile(await file("t.json", text), new Map([["prefix", "b"]]));
    assert.equal(a.hash, b.hash);
    assert.deepEqual(a.searchRequest.body, { index_patterns: ["a-*"], template: {} });
    assert.deepEqual(b.searchRequest.body, { index_patterns: ["b-*"], template: {} });
  });

  it("property: formatting and key order change neither checksum nor request; rawHash keeps the bytes'", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue(), { maxKeys: 4 }),
        fc.integer({ min: 0, max: 4 }),
        async (extra, indent) => {
          const value = { index_patterns: ["x-*"], template: { settings: {} }, _meta: extra };
          const compact = await planSearchFile(
            await file("t.json", JSON.stringify(value)),
            undefined,
          );
          const reordered = Object.fromEntries(Object.entries(value).reverse());
          const spaced = await planSearchFile(
            await file("t.json", JSON.stringify(reordered, null, indent) + "\r\n"),
            undefined,
          );
          assert.equal(spaced.hash, compact.hash);
          assert.equal(spaced.request, compact.request);
          if (spaced.rawHash !== undefined) assert.notEqual(spaced.rawHash, spaced.hash);
        },
      ),
      propertyOptions(100),
    );
  });

  it("refuses a file that is not JSON, naming it", async () => {
    await assert.rejects(
      planSearchFile(await file("bad.json", "{ nope"), undefined),
      (e) => isMigrationError(e, "plan") && /^bad\.json/.test((e as Error).message),
    );
  });

  it("takes a callback only as a request: never an index, template or reindex by its name", async () => {
    const envelope = '{ "method": "POST", "path": "/logs/_refresh" }';
    const planned = await planSearchFile(await file("afterMigrate.json", envelope), undefined);
    assert.equal(planned.request, "POST /logs/_refresh");
    for (
      const [path, text] of [
        ["afterMigrate.json", '{ "settings": { "number_of_shards": 1 } }'],
        ["beforeMigrate__orders-reindex.json", '{ "alias": "orders", "index": "orders-v2" }'],
      ]
    ) {
      await assert.rejects(
        planSearchFile(await file(path, text), undefined),
        (e) =>
          isMigrationError(e, "plan") &&
          /is a callback, and a search callback is a request/.test((e as Error).message),
        path,
      );
    }
  });
});
