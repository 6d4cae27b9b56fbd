// Uploads on real workerd, which has no file system: a body parsed as it arrives keeps its file
// parts in memory, under the same limits, with or without nodejs_compat (whose node:fs is memory).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/upload_worker.ts", import.meta.url));

function content(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

for (const flags of [[], ["nodejs_compat"]]) {
  describe(`uploads on workerd${flags.length === 0 ? "" : " with nodejs_compat"}: in memory`, () => {
    let worker: ServedWorker;
    let origin: string;

    before(async () => {
      worker = await serveWorker(FIXTURE, "upload_worker", { flags });
      origin = worker.origin;
    });

    after(() => worker?.close());

    it("a 3 MB file over the body limit arrives whole; one over max-file-size is 413", async () => {
      const bytes = content(3_000_000);
      const form = new FormData();
      form.append("file", new File([bytes], "big.bin", { type: "application/octet-stream" }));
      const res = await fetch(`${origin}/upload`, { method: "POST", body: form });
      let sum = 0;
      for (const byte of bytes) sum = (sum + byte) % 65521;
      assert.deepEqual(await res.json(), { name: "big.bin", size: 3_000_000, sum });
      const over = new FormData();
      over.append("file", new File([content(4_000_001)], "over.bin"));
      const refused = await fetch(`${origin}/upload`, { method: "POST", body: over });
      assert.equal(refused.status, 413);
      assert.equal(
        (await refused.json()).error,
        "Multipart part 'file' exceeds 4000000 bytes (server.multipart.max-file-size)",
      );
    });
  });
}
