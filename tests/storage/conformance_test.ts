// integration test: S3Proxy (tools/s3proxy.sh start), through tests/storage/s3_server.ts
// The conformance suite on the disk and on a real S3 API server, and what each does when the other
// end dies mid-upload: the S3 server's connection cut and the server gone (no object left, an error
// that says the store is unavailable), a process writing to the disk killed with SIGKILL (no
// object, no half file).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import type { Buffer } from "node:buffer";
import { createServer, type Server, Socket } from "node:net";
import { tmpdir } from "node:os";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FileDriver } from "../../src/storage/file_driver.ts";
import { ObjectStorage } from "../../src/storage/object_storage.ts";
import { S3Driver } from "../../src/storage/s3_driver.ts";
import { StorageError } from "../../src/storage/storage_error.ts";
import { scriptCommand } from "../runtime.ts";
import { conformance, patternStream } from "./conformance.ts";
import {
  bucketName,
  dropBucket,
  makeBucket,
  openUploads,
  S3PROXY,
  s3Settings,
} from "./s3_server.ts";

const MiB = 1024 * 1024;

describe("the file store", () => {
  let folder = "";
  let storage: ObjectStorage | undefined;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), "thaw-conformance-"));
    storage = new ObjectStorage("files", new FileDriver(folder));
  });
  after(() => rm(folder, { recursive: true, force: true }));
  conformance("file", () => storage as ObjectStorage);

  it("leaves no temp file behind a failed write", async () => {
    const names = await readdir(folder, { recursive: true });
    assert.deepEqual(names.filter((name) => name.includes(".thaw-tmp-")), []);
  });

  it("leaves no object, whole or half, when the writing process is killed mid-write", async () => {
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/storage/slow_put.ts", import.meta.url)),
      [folder],
    );
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // Once it says it is writing: a state, not a time.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (data: Buffer) => {
        if (String(data).includes("writing")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`the writer ended first (${code})`)));
    });
    child.kill("SIGKILL");
    await exited;
    assert.equal(await storage?.head("killed/mid-write.bin"), null);
    const listed: string[] = [];
    for await (const object of (storage as ObjectStorage).list("killed/")) listed.push(object.key);
    assert.deepEqual(listed, []);
  });
});

describe("the S3 store", () => {
  const bucket = bucketName("conformance");
  let storage: ObjectStorage | undefined;
  before(async () => {
    await makeBucket(bucket);
    storage = new ObjectStorage("uploads", new S3Driver(s3Settings(bucket)));
  });
  after(async () => {
    if (storage !== undefined) await dropBucket(bucket);
  });
  conformance("s3", () => storage as ObjectStorage);

  it("leaves no upload in parts open behind a failed write", async () => {
    assert.deepEqual(await openUploads(bucket), []);
  });

  it("throws, and leaves no object, when the server dies mid-upload", async () => {
    const proxy = await CuttingProxy.start(new URL(S3PROXY), 12 * MiB);
    try {
      const cut = new ObjectStorage(
        "uploads",
        new S3Driver(s3Settings(bucket, { endpoint: proxy.origin, timeoutMs: 5000 })),
      );
      const error = await cut.put("dies/mid-upload", patternStream(40 * MiB, 9)).catch((e) => e);
      assert.ok(error instanceof StorageError, String(error));
      assert.equal(error.kind, "unavailable", error.message);
      assert.match(error.message, /^storage "uploads": put "dies\/mid-upload": /);
      assert.ok(proxy.cut, "the proxy cut the connection");
    } finally {
      proxy.close();
    }
    // The server, seen without the proxy: no object, whole or half.
    assert.equal(await storage?.head("dies/mid-upload"), null);
  });
});

/**
 * A TCP proxy to `target` that dies, as a server does, once `bytes` have been sent through it:
 * its connections are destroyed and it takes no more.
 */
class CuttingProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #sent = 0;
  cut = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(target: URL, bytes: number): Promise<CuttingProxy> {
    const server = createServer();
    const proxy = new CuttingProxy(server);
    server.on("connection", (client) => proxy.#pipe(client, target, bytes));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get origin(): string {
    const address = this.#server.address();
    return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  }

  #pipe(client: Socket, target: URL, bytes: number): void {
    if (this.cut) return void client.destroy();
    const upstream = new Socket();
    upstream.connect(Number(target.port), target.hostname);
    this.#sockets.add(client).add(upstream);
    for (const socket of [client, upstream]) {
      socket.on("error", () => {});
      socket.on("close", () => {
        this.#sockets.delete(socket);
        (socket === client ? upstream : client).destroy();
      });
    }
    client.on("data", (chunk: Buffer) => {
      this.#sent += chunk.length;
      if (this.#sent >= bytes) return this.#die();
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
  }

  #die(): void {
    this.cut = true;
    this.#server.close();
    for (const socket of this.#sockets) socket.destroy();
  }

  close(): void {
    this.#die();
  }
}
