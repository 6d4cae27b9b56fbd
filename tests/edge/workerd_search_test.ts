// A search connection's bean on real workerd: a worker bundled as Wrangler bundles one under
// nodejs_compat (tests/fixtures/search_worker.ts) indexes, searches and reads the node's version
// through the official client, whose requests go out over workerd's own `fetch`.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";
import { distribution, OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/search_worker.ts", import.meta.url));

describe("a SearchClient bean on workerd", () => {
  let worker: ServedWorker;

  before(async () => {
    worker = await serveWorker(FIXTURE, "search_worker", {
      nodeBuiltins: true,
      loopbackOutbound: true,
      readyPath: "/",
    });
  });

  after(() => worker?.close());

  it("indexes and searches the node over fetch", async () => {
    const index = `thaw-edge-${crypto.randomUUID().slice(0, 8)}`;
    try {
      const answer = await fetch(
        `${worker.origin}/?node=${encodeURIComponent(OPENSEARCH_URL)}&index=${index}`,
      );
      const text = await answer.text();
      assert.equal(answer.status, 200, `${text}\n${worker.output()}`);
      assert.deepEqual(JSON.parse(text), { version: (await distribution()).version, hits: ["1"] });
    } finally {
      await os("DELETE", `/${index}?ignore_unavailable=true`);
    }
  });
});
