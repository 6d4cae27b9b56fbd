// The asserting blocks of the README and docs/ that use `@thaw/thaw/kafka`, run against the real
// broker they name (127.0.0.1:9092, which `tools/kafka.sh start` runs), on every runtime.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createTopic, uniqueName } from "../kafka/broker.ts";
import { SQLITE } from "../sqlite.ts";
import { docBlocks, needsKafka, needsSqlite, runBlock } from "./doc_blocks.ts";

describe("the asserting examples that use Kafka", () => {
  const blocks = docBlocks().filter(needsKafka);

  // A broker that is not there fails here, saying what starts it, rather than in each block.
  before(() => createTopic(uniqueName("docs")));

  it("are there", () => {
    assert.ok(blocks.length >= 1, `found ${blocks.length}`);
  });

  for (const block of blocks) {
    // As in readme_examples_test.ts: a block on SQLite runs where the runtime has node:sqlite; on
    // the others, the runtime's lack is what is checked.
    if (SQLITE === undefined && needsSqlite(block)) {
      it(`cannot run here (no node:sqlite): "${block.heading}", ${block.doc} line ${block.line}`, async () => {
        await assert.rejects(import("node:sqlite"), { code: "ERR_UNKNOWN_BUILTIN_MODULE" });
      });
      continue;
    }
    it(`run: "${block.heading}", ${block.doc} line ${block.line}`, () => runBlock(block));
  }
});
