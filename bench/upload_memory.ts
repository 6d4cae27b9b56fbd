// Peak memory of a server taking uploads, on the runtime that runs this script:
//
//   deno run -A bench/upload_memory.ts
//   bun bench/upload_memory.ts
//   node --import tsx bench/upload_memory.ts
//
// Each figure comes from a server of its own, a child process of the same runtime, served by
// `listen(app)` (on Bun by `Bun.serve` with a larger body limit than listen's 128 MiB), with a `RequestPart` route that streams the file it gets and counts its bytes.
// The peak is the child's VmHWM (Linux's /proc), read after the upload's answer: first a 512 MiB
// upload handed to `app.fetch` in a child of its own (no server: as workerd and tests feed it),
// its peak against the resident size before it; then over a socket a 1 MB upload
// (read whole, under `server.max-body-size`), a 200 MB one (parsed as it arrives, the file in a
// temporary file), and 20 uploads of 200 MB in a row, with the resident size after a garbage
// collection after the 1st, 5th, 10th, 15th and 20th. Not a test: it prints figures, and whether the 200 MB
// peak is under twice the 1 MB one plus `server.multipart.file-size-threshold`.
import { spawn } from "node:child_process";
import { Buffer } from "node:buffer";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";
import process from "node:process";
import { once } from "node:events";
import { bootstrap, GetMapping, PostMapping, RequestPart, RestController } from "../mod.ts";
import { listen } from "../server.ts";

const MB = 1_000_000;
const THRESHOLD = 65536; // the default of server.multipart.file-size-threshold
const RUNTIME = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

@RestController()
class Uploads {
  @PostMapping("/upload", RequestPart("file", { type: File }))
  async upload(file: File): Promise<{ size: number }> {
    let size = 0;
    for await (const chunk of file.stream()) size += chunk.byteLength;
    return { size };
  }

  @GetMapping("/gc")
  gc(): string {
    const g = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
    if (g.Bun !== undefined) g.Bun.gc(true);
    else g.gc?.();
    return "done";
  }
}

async function serve(): Promise<void> {
  const app = await bootstrap({
    controllers: [Uploads],
    config: {
      server: {
        multipart: { "max-file-size": 512 * 1024 * 1024, "max-request-size": 512 * 1024 * 1024 },
      },
    },
  });
  const g = globalThis as {
    Bun?: {
      serve(options: {
        port: number;
        hostname: string;
        fetch: typeof app.fetch;
        maxRequestBodySize: number;
      }): { port: number };
    };
  };
  // listen(app) on Bun caps a request body at 128 MiB (Bun's maxRequestBodySize, which it
  // enforces itself, before any code runs): past it, Bun is given a larger one here.
  const port = g.Bun !== undefined
    ? g.Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: app.fetch,
      maxRequestBodySize: 1024 * 1024 * 1024,
    }).port
    : (await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true })).port;
  console.log(`PORT ${port}`);
}

/** A child server of this runtime; resolves with its pid and port once it listens. */
async function startServer() {
  const self = new URL(import.meta.url).pathname;
  const [command, args] = RUNTIME === "deno"
    ? [process.execPath, ["run", "-A", "--v8-flags=--expose-gc", self, "--serve"]]
    : RUNTIME === "bun"
    ? [process.execPath, [self, "--serve"]]
    : [process.execPath, ["--expose-gc", "--import", "tsx", self, "--serve"]];
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /PORT (\d+)/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}: ${out}`)));
  });
  return { child, port };
}

/** The child's resident memory now and at its peak, in MB (Linux's /proc/<pid>/status). */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: Math.round(kb("VmRSS") / 1000), peak: Math.round(kb("VmHWM") / 1000) };
}

/** One request over a socket, its body written as the socket drains; the answer's status and body. */
async function exchange(
  port: number,
  head: string,
  body?: (write: (bytes: Uint8Array) => Promise<void>) => Promise<void>,
): Promise<{ status: number; body: string }> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  // A server that answers before the body's end may reset: the answer read so far tells.
  socket.on("error", () => {});
  const closed = once(socket, "close");
  const write = async (bytes: Uint8Array) => {
    if (!socket.write(bytes)) await once(socket, "drain");
  };
  await write(Buffer.from(head, "latin1"));
  await body?.(write);
  await closed;
  const text = Buffer.concat(received).toString("latin1");
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0),
    body: text.slice(text.indexOf("\r\n\r\n") + 4),
  };
}

const pattern = new Uint8Array(64 * 1024).map((_, i) => i % 251);

async function upload(port: number, size: number): Promise<void> {
  const start = Buffer.from(
    '--B\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n' +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
  const end = Buffer.from("\r\n--B--\r\n");
  const length = start.byteLength + size + end.byteLength;
  const answer = await exchange(
    port,
    "POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
      `Content-Type: multipart/form-data; boundary=B\r\nContent-Length: ${length}\r\n\r\n`,
    async (write) => {
      await write(start);
      for (let sent = 0; sent < size; sent += pattern.byteLength) {
        await write(pattern.subarray(0, Math.min(pattern.byteLength, size - sent)));
      }
      await write(end);
    },
  );
  if (answer.status !== 200 || JSON.parse(answer.body).size !== size) {
    throw new Error(`upload of ${size} bytes: ${answer.status} ${answer.body}`);
  }
}

async function collected(port: number, pid: number): Promise<number> {
  await exchange(port, "GET /gc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  return (await memoryOf(pid)).rss;
}

async function peakOf(size: number): Promise<number> {
  const { child, port } = await startServer();
  try {
    await upload(port, size);
    return (await memoryOf(child.pid!)).peak;
  } finally {
    child.kill();
  }
}

/**
 * The growth of resident memory, in MB, while a child of this runtime reads a 512 MiB upload
 * through `app.fetch` (tests/fixtures/upload_in_process.ts, the test's own, here without its
 * forced collections): its peak (VmHWM) against its resident size before.
 */
async function inProcess(): Promise<{ before: number; peak: number }> {
  const fixture = new URL("../tests/fixtures/upload_in_process.ts", import.meta.url).pathname;
  const location = await mkdtemp(join(tmpdir(), "thaw-bench-upload-"));
  const args = [fixture, location, "--no-collect"];
  const [command, flags] = RUNTIME === "deno"
    ? [process.execPath, ["run", "-A", ...args]]
    : RUNTIME === "bun"
    ? [process.execPath, args]
    : [process.execPath, ["--import", "tsx", ...args]];
  try {
    const child = spawn(command, flags, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => out += chunk.toString());
    const [code] = await once(child, "exit");
    const figures = JSON.parse(out.trim().split("\n").at(-1) ?? "null") as
      | { status: number; before: number; peak: number }
      | null;
    if (code !== 0 || figures?.status !== 200) {
      throw new Error(`the in-process child exited ${code}: ${out}`);
    }
    return { before: Math.round(figures.before / MB), peak: Math.round(figures.peak / MB) };
  } finally {
    await rm(location, { recursive: true, force: true });
  }
}

async function drive(): Promise<void> {
  const { before, peak: inProcessPeak } = await inProcess();
  const small = await peakOf(1 * MB);
  const large = await peakOf(200 * MB);
  const bound = 2 * small + THRESHOLD / MB;
  console.log(`${RUNTIME} ${process.versions[RUNTIME] ?? ""}: peak RSS (VmHWM), MB`);
  console.log(
    `  512 MiB upload through app.fetch: ${before} before, peak ${inProcessPeak}, grown by ${
      inProcessPeak - before
    } (bound 192 MiB: ${(inProcessPeak - before) * MB < 192 * 1024 * 1024 ? "ok" : "OVER"})`,
  );
  console.log(`  1 MB upload:   ${small}`);
  console.log(
    `  200 MB upload: ${large}  (bound 2 x 1 MB + threshold: ${bound.toFixed(1)}) ${
      large < bound ? "ok" : "OVER"
    }`,
  );
  const { child, port } = await startServer();
  try {
    const after: Record<number, number> = {};
    for (let i = 1; i <= 20; i++) {
      await upload(port, 200 * MB);
      if (i === 1 || i % 5 === 0) after[i] = await collected(port, child.pid!);
    }
    const { peak } = await memoryOf(child.pid!);
    const points = Object.entries(after).map(([i, rss]) => `#${i} ${rss}`).join(", ");
    console.log(`  20 x 200 MB in a row: RSS after a GC after upload ${points}; peak ${peak}`);
  } finally {
    child.kill();
  }
}

if (process.argv.includes("--serve")) await serve();
else await drive();
