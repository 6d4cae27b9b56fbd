// A multipart body read as it arrives holds a chunk or two at a time, on every runtime, through
// `app.fetch` as workerd and tests feed it: the file part goes to a temporary file, and what the
// reader kept of each chunk must be garbage once the chunk is written.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { bootstrap, PostMapping, RequestPart, RestController } from "../../mod.ts";
import { RUNTIME } from "../runtime.ts";

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** The process's resident memory, in bytes. */
function resident(): number {
  return process.memoryUsage.rss();
}

describe(`a streamed multipart upload through app.fetch on ${RUNTIME}`, () => {
  it("grows resident memory by far less than the body (512 MiB: under 192 MiB)", async () => {
    const location = await mkdtemp(join(tmpdir(), "thaw-upload-memory-"));
    let peak = 0;
    const sample = () => {
      peak = Math.max(peak, resident());
    };

    @RestController()
    class Uploads {
      @PostMapping("/upload", RequestPart("file", { type: File }))
      async upload(file: File): Promise<{ size: number }> {
        let size = 0;
        for await (const chunk of file.stream()) {
          size += chunk.byteLength;
          sample();
        }
        return { size };
      }
    }

    try {
      const size = 512 * MiB;
      const app = await bootstrap({
        controllers: [Uploads],
        config: {
          server: {
            multipart: { "max-file-size": size, "max-request-size": 2 * size, location },
          },
        },
      });
      const head = new TextEncoder().encode(
        '--B\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n' +
          "Content-Type: application/octet-stream\r\n\r\n",
      );
      const tail = new TextEncoder().encode("\r\n--B--\r\n");
      let sent = -1;
      // Each chunk is a new buffer, as a server's are: one kept alive by the reader is memory the
      // process cannot give back.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          sample();
          if (sent < 0) {
            sent = 0;
            controller.enqueue(head);
          } else if (sent < size) {
            const length = Math.min(CHUNK, size - sent);
            controller.enqueue(new Uint8Array(length).fill(0x61 + (sent / CHUNK) % 26));
            sent += length;
          } else {
            controller.enqueue(tail);
            controller.close();
          }
        },
      });
      const before = resident();
      const response = await app.fetch(
        new Request("http://localhost/upload", {
          method: "POST",
          headers: { "content-type": "multipart/form-data; boundary=B" },
          body,
          duplex: "half",
        } as RequestInit),
      );
      sample();
      assert.equal(response.status, 200, await response.clone().text());
      assert.deepEqual(await response.json(), { size });
      const grown = peak - before;
      assert.ok(
        grown < 192 * MiB,
        `resident memory grew by ${Math.round(grown / MiB)} MiB while a ${size / MiB} MiB ` +
          `upload was read (from ${Math.round(before / MiB)} MiB)`,
      );
      // The temporary file went with the answer.
      assert.deepEqual(await readdir(location), []);
    } finally {
      await rm(location, { recursive: true, force: true });
    }
  });
});
