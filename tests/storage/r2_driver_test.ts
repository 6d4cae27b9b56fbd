// The R2 store through a Worker's bucket binding: the conformance suite on a binding kept in memory
// (workerd has no R2 store of its own to bind: see docs/storage.md), the bindings read from the
// `env` each event brings, and no upload in parts left open by a failed write.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ObjectStorage } from "../../src/storage/object_storage.ts";
import { R2Bindings, R2Driver } from "../../src/storage/r2_driver.ts";
import type { EdgeHandlers } from "../../src/edge_events.ts";
import { conformance } from "./conformance.ts";
import { MemoryR2Bucket } from "./memory_r2_bucket.ts";

describe("the R2 store", () => {
  const bucket = new MemoryR2Bucket();
  const bindings = new R2Bindings();
  let storage: ObjectStorage | undefined;
  before(() => {
    bindings.bind({ UPLOADS: bucket });
    storage = new ObjectStorage("edge", new R2Driver("UPLOADS", bindings));
  });
  conformance("r2", () => storage as ObjectStorage);

  it("leaves no upload in parts open behind the writes above, failed or not", () => {
    assert.deepEqual([...bucket.openUploads], []);
  });
});

describe("R2Bindings", () => {
  it("reads the bucket from the env of each event, before the app handles it", async () => {
    const bindings = new R2Bindings();
    const storage = new ObjectStorage("edge", new R2Driver("UPLOADS", bindings));
    await assert.rejects(storage.head("a"), {
      kind: "unavailable",
      message: /no R2 binding yet: the bindings come with the Worker's first event \(UPLOADS\)/,
    });
    const first = new MemoryR2Bucket();
    const seen: string[] = [];
    const app = {
      fetch: async () => {
        seen.push(String((await storage.head("a"))?.size ?? "none"));
        return new Response("ok");
      },
      scheduled: async () => {},
      queue: async () => {},
    } as unknown as EdgeHandlers;
    const handlers = { ...app, ...bindings.handlers(app) } as EdgeHandlers;
    await first.put("a", new Uint8Array(3));
    await handlers.fetch(new Request("http://localhost/"), { UPLOADS: first });
    await handlers.fetch(new Request("http://localhost/"), { UPLOADS: new MemoryR2Bucket() });
    assert.deepEqual(seen, ["3", "none"]);
    await assert.rejects(
      Promise.resolve(handlers.fetch(new Request("http://localhost/"), { OTHER: first })),
      {
        kind: "unavailable",
        message: /the Worker has no R2 bucket bound as "UPLOADS"/,
      },
    );
    assert.equal(typeof (handlers as { queue?: unknown }).queue, "function");
  });
});

describe("the R2 store's ifNoneMatch on a write in parts", () => {
  it("refuses to complete when an object came while the parts were sent", async () => {
    const bucket = new MemoryR2Bucket();
    const bindings = new R2Bindings();
    bindings.bind({ UPLOADS: bucket });
    const storage = new ObjectStorage("edge", new R2Driver("UPLOADS", bindings));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Another writer's object lands once the first part is read.
        if (sent === 1) await bucket.put("race", new TextEncoder().encode("theirs"));
        if (sent++ === 3) return controller.close();
        controller.enqueue(new Uint8Array(8 * 1024 * 1024));
      },
    }, { highWaterMark: 0 });
    await assert.rejects(storage.put("race", body, { ifNoneMatch: true }), { kind: "exists" });
    assert.equal(await new Response((await storage.get("race"))?.body).text(), "theirs");
    assert.deepEqual([...bucket.openUploads], []);
  });
});
