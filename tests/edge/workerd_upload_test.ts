// Uploads on real workerd, which has no file system: a body parsed as it arrives keeps its file
// parts in memory, under the same limits, with or without nodejs_compat (whose node:fs is memory).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";
import { WORKER_BUILD } from "../../tools/bundle_worker.ts";
import { freePort } from "../helpers.ts";
import { until, WORKERD } from "./workerd.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/upload_worker.ts", import.meta.url));

const config = (flags: string) =>
  `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "upload", worker = .upload)],
  sockets = [(name = "upload", address = "127.0.0.1:0", http = (), service = "upload")],
);

const upload :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "upload_worker.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = [${flags}],
);
`;

function content(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

for (const flags of ["", '"nodejs_compat"']) {
  describe(`uploads on workerd${flags === "" ? "" : " with nodejs_compat"}: in memory`, () => {
    let dir: string;
    let origin: string;
    let child: ChildProcess | undefined;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "thaw-workerd-upload-"));
      await build({
        ...WORKER_BUILD,
        entryPoints: [{ in: FIXTURE, out: "upload_worker" }],
        outdir: dir,
        minify: true,
        logLevel: "warning",
      });
      await stop();
      await writeFile(join(dir, "config.capnp"), config(flags));
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      child = spawn(WORKERD, [
        "serve",
        join(dir, "config.capnp"),
        "--socket-addr",
        `upload=127.0.0.1:${port}`,
      ], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout!.on("data", (chunk) => output += chunk);
      child.stderr!.on("data", (chunk) => output += chunk);
      await until(`${origin}/`, child, () => output);
    });

    after(async () => {
      child?.kill();
      await rm(dir, { recursive: true, force: true });
    });

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
