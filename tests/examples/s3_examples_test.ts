// The asserting blocks of the README and docs/ that configure an `s3://` store, run against the
// S3 API server they name (S3Proxy on 127.0.0.1:9310, which `tools/s3proxy.sh start` runs), with
// the bucket they say is there, on every runtime.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { s3Request } from "../storage/s3_server.ts";
import { docBlocks, needsS3, runBlock } from "./doc_blocks.ts";

describe("the asserting examples that use an S3 store", () => {
  const blocks = docBlocks().filter(needsS3);

  // The bucket the docs name, made once; made already (by another runtime's run) is as good.
  before(async () => {
    const { status, text } = await s3Request("PUT", "/docs-example");
    assert.ok(status === 200 || /BucketAlreadyOwnedByYou/.test(text), `${status} ${text}`);
  });

  it("are there", () => {
    assert.ok(blocks.length >= 1, `found ${blocks.length}`);
  });

  for (const block of blocks) {
    it(`run: "${block.heading}", ${block.doc} line ${block.line}`, () => runBlock(block));
  }
});
