import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { jsonContentHash } from "../../../../src/migrate/files/content_hash.ts";
import type { ReindexSpec } from "../../../../src/migrate/search/plan/search_request.ts";
import { reindexHash } from "../../../../src/migrate/search/reindex/reindex_setup.ts";
import { propertyOptions } from "../../../property.ts";

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
const spec: fc.Arbitrary<ReindexSpec> = fc.record({
  alias: name,
  index: name,
  source: fc.option(name, { nil: undefined }),
  script: fc.option(fc.record({ source: fc.string() }), { nil: undefined }),
  deleteSource: fc.boolean(),
  unblockSource: fc.boolean(),
}).map(({ source, script, ...rest }) => ({
  ...rest,
  ...(source === undefined ? {} : { source }),
  ...(script === undefined ? {} : { script }),
}));
const body = fc.dictionary(fc.constantFrom("settings", "mappings"), fc.jsonValue());

describe("reindexHash", () => {
  it("is the checksum a progress noted before unblockSource existed, whatever that option says", async () => {
    await fc.assert(
      fc.asyncProperty(spec, body, async (s, b) => {
        const { unblockSource: _, ...before } = s;
        const earlier = await jsonContentHash({ reindex: before, body: b });
        assert.equal(await reindexHash({ ...s, unblockSource: true }, b), earlier);
        assert.equal(await reindexHash({ ...s, unblockSource: false }, b), earlier);
      }),
      propertyOptions(100),
    );
  });

  it("changes with what is copied and where: another delete_source or index is another reindex", async () => {
    await fc.assert(
      fc.asyncProperty(spec, body, async (s, b) => {
        const hash = await reindexHash(s, b);
        assert.notEqual(await reindexHash({ ...s, deleteSource: !s.deleteSource }, b), hash);
        assert.notEqual(await reindexHash({ ...s, index: `${s.index}-x` }, b), hash);
      }),
      propertyOptions(100),
    );
  });
});
