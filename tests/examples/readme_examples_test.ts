// Every TypeScript block of the README and of docs/ that asserts what it shows (it imports
// node:assert) runs here, as a user would paste it, with `@thaw/thaw` pointing at this checkout: a
// README example that stops matching the library fails the suite on every runtime. The blocks that
// need the Kafka broker run in kafka_examples_test.ts, with the broker; those that need an S3 API
// server in s3_examples_test.ts, with S3Proxy.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SQLITE } from "../sqlite.ts";
import { docBlocks, needsKafka, needsS3, needsSqlite, runBlock } from "./doc_blocks.ts";

describe("the asserting examples of the README and docs/", () => {
  const blocks = docBlocks().filter((block) => !needsKafka(block) && !needsS3(block));

  it("are there", () => {
    assert.ok(blocks.length >= 5, `found ${blocks.length}`);
  });

  for (const block of blocks) {
    // A block on SQLite (node:sqlite, or a datasource URL) runs where the runtime has node:sqlite
    // (all but Node before 22.13): there, the runtime's lack is what is checked.
    if (SQLITE === undefined && needsSqlite(block)) {
      it(`cannot run here (no node:sqlite): "${block.heading}", ${block.doc} line ${block.line}`, async () => {
        await assert.rejects(import("node:sqlite"), { code: "ERR_UNKNOWN_BUILTIN_MODULE" });
      });
      continue;
    }
    it(`run: "${block.heading}", ${block.doc} line ${block.line}`, () => runBlock(block));
  }
});
