// Uploads that stream: a multipart body longer than `server.max-body-size` (or of unknown length)
// is parsed as it arrives, under the `server.multipart.*` limits; a part larger than the
// threshold goes to a temporary file, gone once the answer is made, however the request ended.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import {
  type Application,
  bootstrap,
  GetMapping,
  HttpRequest,
  PostMapping,
  RequestParam,
  RequestPart,
  RestController,
} from "../../mod.ts";
import { memoryLogger } from "../helpers.ts";
import { suiteTempDirs } from "../temp_dir.ts";

const run = promisify(execFile);
const encoder = new TextEncoder();
const TYPE = "multipart/form-data; boundary=XyZ";
const THRESHOLD = 1000;
const MAX_FILE = 300_000;
const MAX_REQUEST = 600_000;

const suiteDir = suiteTempDirs();
let location: string;
/** What the handler saw of the spool folder while it ran. */
let seen: string[] = [];

@RestController()
class Uploads {
  @GetMapping("/health")
  health(): string {
    return "up";
  }

  @PostMapping("/upload", RequestPart("f", { type: File }), RequestPart("n", { required: false }))
  async upload(f: File, n: File | string | undefined) {
    seen = await readdir(location);
    let streamed = 0;
    let sum = 0;
    for await (const chunk of f.stream()) {
      streamed += chunk.byteLength;
      for (const byte of chunk) sum = (sum + byte) % 65521;
    }
    const head = [...new Uint8Array(await f.slice(0, 4).arrayBuffer())];
    return { name: f.name, type: f.type, size: f.size, streamed, sum, head, n: n ?? null };
  }

  @PostMapping("/fail", RequestPart("f", { type: File }))
  async fail(f: File) {
    seen = await readdir(location);
    await f.slice(0, 1).arrayBuffer();
    throw new Error("the handler failed");
  }

  @PostMapping("/peek", RequestPart("f", { type: File }))
  async peek(f: File) {
    // One chunk read, and the stream left as it is: neither read to its end nor cancelled.
    const { value } = await f.stream().getReader().read();
    return value?.byteLength ?? 0;
  }

  @PostMapping("/peek-slice", RequestPart("f", { type: File }))
  async peekSlice(f: File) {
    // The same, of a part of the file.
    const { value } = await f.slice(1000).stream().getReader().read();
    return value?.byteLength ?? 0;
  }

  @PostMapping("/request", RequestPart("f", { type: File }), HttpRequest)
  async again(f: File, request: HttpRequest) {
    return { size: f.size, length: (await request.bytes()).byteLength };
  }
}

let app: Application;
const logger = memoryLogger();

before(async () => {
  location = await suiteDir("thaw-upload-test-");
  app = await bootstrap({
    controllers: [Uploads],
    logger,
    config: {
      server: {
        "max-body-size": 4096,
        multipart: {
          "max-file-size": MAX_FILE,
          "max-request-size": MAX_REQUEST,
          "max-parts": 5,
          "file-size-threshold": THRESHOLD,
          location,
        },
      },
    },
  });
});

/** Bytes `0, 1, ... 250, 0, 1, ...`: no run of them is the delimiter. */
function content(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (const byte of bytes) sum = (sum + byte) % 65521;
  return sum;
}

const filePart = (name: string, filename: string, bytes: Uint8Array): Uint8Array[] => [
  encoder.encode(
    `--XyZ\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
      "Content-Type: application/x-test\r\n\r\n",
  ),
  bytes,
  encoder.encode("\r\n"),
];
const textPart = (name: string, text: string): Uint8Array[] => [
  encoder.encode(`--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${text}\r\n`),
];
const CLOSE = encoder.encode("--XyZ--\r\n");

/**
 * A body sent as a stream of up to 16 KiB chunks, of unknown length: `pulled` counts the bytes
 * the server asked for. `failAt`: the stream errors once that many bytes were sent, as a client
 * gone mid-body.
 */
function streamed(chunks: readonly Uint8Array[], failAt?: number) {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  const state = { pulled: 0, size: all.byteLength, failed: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAt !== undefined && state.pulled >= failAt) {
        state.failed = true;
        return controller.error(new Error("the client went away"));
      }
      if (state.pulled >= all.byteLength) return controller.close();
      const next = all.slice(state.pulled, Math.min(all.byteLength, state.pulled + 16384));
      state.pulled += next.byteLength;
      controller.enqueue(next);
    },
  }, { highWaterMark: 0 });
  return { body, state };
}

function post(path: string, body: BodyInit, headers: Record<string, string> = {}) {
  return Promise.resolve(app.fetch(
    new Request(`http://localhost${path}`, {
      method: "POST",
      body,
      headers: { "content-type": TYPE, ...headers },
      duplex: "half",
    } as RequestInit),
  ));
}

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  return { status: res.status, error: (await res.json()).error };
}

describe("streamed uploads", () => {
  it("a file past the threshold is spooled while the handler runs, streams and slices, then is deleted", async () => {
    const bytes = content(200_000);
    const { body } = streamed([...filePart("f", "big.bin", bytes), ...textPart("n", "7"), CLOSE]);
    const res = await post("/upload", body);
    assert.deepEqual(await res.json(), {
      name: "big.bin",
      type: "application/x-test",
      size: 200_000,
      streamed: 200_000,
      sum: checksum(bytes),
      head: [0, 1, 2, 3],
      n: "7",
    });
    assert.equal(seen.length, 1, `the handler saw ${seen.join(", ")}`);
    assert.deepEqual(await readdir(location), []);
  });

  it("a file under the threshold stays in memory: no temporary file", async () => {
    const bytes = content(THRESHOLD);
    const { body } = streamed([...filePart("f", "small.bin", bytes), CLOSE]);
    const res = await post("/upload", body);
    const answer = await res.json();
    assert.deepEqual([answer.size, answer.sum], [THRESHOLD, checksum(bytes)]);
    assert.deepEqual(seen, []);
  });

  it("a body declared within server.max-body-size is read whole: no temporary file, and HttpRequest reads it again", async () => {
    const chunks = [...filePart("f", "a.bin", content(3000)), CLOSE];
    const whole = new Blob(chunks as BlobPart[]);
    const res = await post("/request", whole, { "content-length": String(whole.size) });
    assert.deepEqual(await res.json(), { size: 3000, length: whole.size });
    assert.deepEqual(await readdir(location), []);
  });

  it("a body read as it arrived cannot be read again: HttpRequest's read is a 500 that says why", async () => {
    const { body } = streamed([...filePart("f", "a.bin", content(3000)), CLOSE]);
    const lines = logger.lines.length;
    const res = await post("/request", body);
    assert.equal(res.status, 500);
    assert.match(
      String(logger.lines.slice(lines).flat().join(" ")),
      /read as it arrived, into its multipart parts .* take the parts as RequestPart arguments/,
    );
  });

  it("the temporary file is deleted when the handler throws", async () => {
    const { body } = streamed([...filePart("f", "big.bin", content(50_000)), CLOSE]);
    const res = await post("/fail", body);
    assert.equal(res.status, 500);
    assert.equal(seen.length, 1);
    assert.deepEqual(await readdir(location), []);
  });

  it("a client gone mid-file: 400, and the temporary file is deleted", async () => {
    const { body, state } = streamed(
      [...filePart("f", "big.bin", content(200_000)), CLOSE],
      100_000,
    );
    const res = await post("/upload", body);
    assert.ok(state.failed);
    assert.deepEqual(await errorOf(res), {
      status: 400,
      error: "Request body ended before it was complete",
    });
    assert.deepEqual(await readdir(location), []);
  });

  it("a file over max-file-size is 413 naming the key, and the rest is not read", async () => {
    const { body, state } = streamed([
      ...filePart("f", "big.bin", content(MAX_FILE + 100_000)),
      CLOSE,
    ]);
    const res = await post("/upload", body);
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: `Multipart part 'f' exceeds ${MAX_FILE} bytes (server.multipart.max-file-size)`,
    });
    assert.ok(state.pulled < MAX_FILE + 2 * 16384, `pulled ${state.pulled} of ${state.size}`);
    assert.deepEqual(await readdir(location), []);
  });

  it("a text part over server.max-body-size is 413 naming it: a field is held in memory", async () => {
    const { body, state } = streamed([
      ...filePart("f", "small.bin", content(10)),
      ...textPart("n", "x".repeat(100_000)),
      CLOSE,
    ]);
    const res = await post("/upload", body);
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: "Multipart field 'n' exceeds 4096 bytes (server.max-body-size); only a file part " +
        "(one with a filename) may be larger",
    });
    assert.ok(state.pulled < 4096 + 2 * 16384, `pulled ${state.pulled} of ${state.size}`);
    assert.deepEqual(await readdir(location), []);
    // A file part of the same size is taken.
    const file = streamed([...filePart("f", "big.bin", content(100_000)), CLOSE]);
    assert.equal((await post("/upload", file.body)).status, 200);
  });

  it("a body over max-request-size is 413 naming the key, and the rest is not read", async () => {
    const part = content(200_000);
    const { body, state } = streamed([
      ...filePart("f", "a.bin", part),
      ...filePart("g", "b.bin", part),
      ...filePart("h", "c.bin", part),
      ...filePart("i", "d.bin", part),
      CLOSE,
    ]);
    const res = await post("/upload", body);
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: `Multipart body exceeds ${MAX_REQUEST} bytes (server.multipart.max-request-size)`,
    });
    assert.ok(state.pulled < MAX_REQUEST + 2 * 16384, `pulled ${state.pulled} of ${state.size}`);
    assert.deepEqual(await readdir(location), []);
  });

  it("a declared length over max-request-size is 413 before any byte is read", async () => {
    const { body, state } = streamed([...filePart("f", "a.bin", content(10)), CLOSE]);
    const request = new Request("http://localhost/upload", {
      method: "POST",
      body,
      headers: { "content-type": TYPE, "content-length": String(MAX_REQUEST + 1) },
      duplex: "half",
    } as RequestInit);
    const res = await app.fetch(request);
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: `Multipart body exceeds ${MAX_REQUEST} bytes (server.multipart.max-request-size)`,
    });
    // Some runtimes drop a Content-Length given with a stream: then it is counted as it comes.
    if (request.headers.get("content-length") !== null) assert.equal(state.pulled, 0);
  });

  it("a file stream (or a slice's) read in part and left open is closed with the request: no descriptor on a deleted file", async () => {
    for (const route of ["/peek", "/peek", "/peek-slice", "/peek-slice"]) {
      const { body } = streamed([...filePart("f", "a.bin", content(200_000)), CLOSE]);
      const res = await post(route, body);
      assert.equal(res.status, 200, await res.clone().text());
      assert.ok(Number(await res.text()) > 0);
    }
    // The process's open files, as Linux lists them, asked of another process: Deno lets no test
    // without --allow-all read its own /proc/self. find lists the folder, then reads each link: a
    // descriptor closed in between (a socket, the pipe to find) is gone, and find says so and
    // exits 1. A descriptor that closed is no leak: only those lines may be there.
    const { stdout, stderr } = await run(
      "find",
      [`/proc/${process.pid}/fd`, "-lname", `${location}/*`],
    ).catch((error: { code?: number; stdout: string; stderr: string }) => {
      if (error.code !== 1) throw error;
      return error;
    });
    // Quoted as the locale quotes: ‘…’ or '…'; find names itself as it was started (Deno starts
    // it by its full path, /usr/bin/find).
    const gone = /^(?:\S*\/)?find: .\/proc\/\d+\/fd\/\d+.: No such file or directory$/;
    assert.deepEqual(stderr.split("\n").filter((line) => line !== "" && !gone.test(line)), []);
    assert.equal(stdout, "");
    assert.deepEqual(await readdir(location), []);
  });

  it("more parts than max-parts is 413 naming the key", async () => {
    const parts = Array.from({ length: 6 }, (_, i) => textPart(`p${i}`, "x")).flat();
    const { body } = streamed([...filePart("f", "a.bin", content(5000)), ...parts, CLOSE]);
    assert.deepEqual(await errorOf(await post("/upload", body)), {
      status: 413,
      error: "Multipart body has more than 5 parts (server.multipart.max-parts)",
    });
    assert.deepEqual(await readdir(location), []);
  });
});

describe("an upload when server.request-timeout passes", () => {
  const timedDir = suiteTempDirs();
  let timedLocation: string;
  const started: string[] = [];
  const apps: Application[] = [];
  after(() => Promise.all(apps.map((app) => app.close())));

  @RestController()
  class Slow {
    @PostMapping("/hang", RequestPart("f", { type: File }))
    hang(_f: File): Promise<string> {
      started.push("hang");
      return new Promise(() => {});
    }

    @PostMapping("/size", RequestPart("f", { type: File }))
    size(f: File): string {
      started.push("size");
      return String(f.size);
    }

    // Answers past the timeout, holding the event loop: the timer is due as the upload's files
    // are being deleted, after the answer.
    @PostMapping("/busy", RequestPart("f", { type: File }), RequestParam("ms", { type: Number }))
    busy(_f: File, ms: number): string {
      started.push("busy");
      const until = performance.now() + ms;
      while (performance.now() < until) { /* the event loop is held */ }
      return "done";
    }
  }

  before(async () => {
    timedLocation = await timedDir("thaw-upload-timeout-");
  });

  const timedApp = async (ms: number): Promise<Application> => {
    const app = await bootstrap({
      controllers: [Slow],
      logger: memoryLogger(),
      config: {
        server: {
          "request-timeout": ms,
          "max-body-size": 4096,
          multipart: { "file-size-threshold": THRESHOLD, location: timedLocation },
        },
      },
    });
    apps.push(app);
    return app;
  };

  const send = (app: Application, path: string, body: ReadableStream<Uint8Array>) =>
    Promise.resolve(app.fetch(
      new Request(`http://localhost${path}`, {
        method: "POST",
        body,
        headers: { "content-type": TYPE },
        duplex: "half",
      } as RequestInit),
    ));

  it("a body that stalls mid-file: 503, its read is cancelled, no temporary file, no handler", async () => {
    const head = filePart("f", "a.bin", content(20_000)).slice(0, 2);
    let cancelled!: () => void;
    const wasCancelled = new Promise<void>((resolve) => cancelled = resolve);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent < head.length) return controller.enqueue(head[sent++]);
        return new Promise<void>(() => {}); // the client sends no more
      },
      cancel() {
        cancelled();
      },
    }, { highWaterMark: 0 });
    const res = await send(await timedApp(200), "/size", body);
    assert.equal(res.status, 503);
    await res.body?.cancel();
    assert.deepEqual(await readdir(timedLocation), []);
    await wasCancelled;
    assert.deepEqual(started, []);
  });

  it("a timeout due while the answer's files are deleted: 503 once they are gone", async () => {
    // The handler holds the event loop past the timeout: the timer is due as the files go after
    // its answer. Whatever the answer, no file is left once it is there; the turns go on until
    // the timer came during the deletions (a 503 from a handler that ran). A read that outlasts
    // the timeout (a loaded machine) doubles it; deletions that beat the timer (a 200) try again.
    let ms = 50;
    for (let turn = 1;; turn++) {
      started.length = 0;
      const { body } = streamed([...filePart("f", "a.bin", content(20_000)), CLOSE]);
      const res = await send(await timedApp(ms), `/busy?ms=${ms + 50}`, body);
      await res.body?.cancel();
      assert.deepEqual(await readdir(timedLocation), [], `turn ${turn}: answered ${res.status}`);
      if (res.status === 503 && started.length > 0) break;
      assert.ok(turn < 20, `the timer never came during the deletions`);
      if (started.length === 0) {
        assert.equal(res.status, 503);
        ms = Math.min(ms * 2, 30_000);
      } else assert.equal(res.status, 200);
    }
  });

  it("a handler that never settles: 503, and its temporary file is gone", async () => {
    // The timeout doubles from 1 ms until it passes after the handler started: the first ones
    // pass while the upload is read and spooled (the read abandoned, its files deleted before the
    // 503), and a loaded machine, whose read outlasts any fixed timeout, only takes more turns.
    for (let ms = 1;; ms = Math.min(ms * 2, 30_000)) {
      started.length = 0;
      const { body } = streamed([...filePart("f", "a.bin", content(20_000)), CLOSE]);
      const res = await send(await timedApp(ms), "/hang", body);
      assert.equal(res.status, 503);
      await res.body?.cancel();
      assert.deepEqual(await readdir(timedLocation), []);
      if (started.length > 0 || ms === 30_000) break;
    }
    assert.deepEqual(started, ["hang"]);
  });
});
