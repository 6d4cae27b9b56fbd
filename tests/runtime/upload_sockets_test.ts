// Streamed uploads over a real socket on whichever runtime runs the suite: a file past the
// threshold goes through a temporary file that is gone once the answer is made, or once the
// client goes away mid-body; a file over its limit is answered 413 before the rest is sent.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFileSync } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { bootstrap, GetMapping, PostMapping, RequestPart, RestController } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { assertStillServes, exchange, until } from "./raw_client.ts";
import { suiteTempDirs, tempDir } from "../temp_dir.ts";

@RestController()
class Uploads {
  @GetMapping("/health")
  health(): string {
    return "up";
  }

  @PostMapping("/upload", RequestPart("f", { type: File }))
  async upload(f: File): Promise<unknown> {
    let size = 0;
    let sum = 0;
    for await (const chunk of f.stream()) {
      size += chunk.byteLength;
      for (const byte of chunk) sum = (sum + byte) % 65521;
    }
    return { name: f.name, size, sum };
  }
}

const THRESHOLD = 1000;
const MAX_FILE = 300_000;

/** `size` bytes `0, 1, ... 250, 0, ...` as latin1 text: no run of them is the delimiter. */
function content(size: number): string {
  let text = "";
  for (let i = 0; i < size; i++) text += String.fromCharCode(i % 251);
  return text;
}

function checksum(text: string): number {
  let sum = 0;
  for (let i = 0; i < text.length; i++) sum = (sum + text.charCodeAt(i)) % 65521;
  return sum;
}

const partHead = 'Content-Disposition: form-data; name="f"; filename="up.bin"\r\n' +
  "Content-Type: application/octet-stream\r\n\r\n";
const body = (file: string) => `--B\r\n${partHead}${file}\r\n--B--\r\n`;
const head = (length: number) =>
  "POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
  `Content-Type: multipart/form-data; boundary=B\r\nContent-Length: ${length}\r\n\r\n`;

/**
 * Writes `text` and resolves with the first response once it is whole (its `Content-Length`),
 * or with what came when the server closed: the client never sends the rest of its body.
 */
function answerBeforeBody(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(received.toString())}`));
    }, 10_000);
    const done = () => {
      clearTimeout(deadline);
      socket.destroy();
      resolve(received.toString("latin1"));
    };
    socket.on("error", () => {}); // the server may reset once it answered: "close" reports it
    socket.on("close", done);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const all = received.toString("latin1");
      const split = all.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(all.slice(0, Math.max(split, 0)));
      if (length !== null && all.length >= split + 4 + Number(length[1])) done();
    });
    socket.on("connect", () => socket.write(Buffer.from(text, "latin1")));
  });
}

describe(`streamed uploads over a real socket on ${RUNTIME}`, () => {
  let server: Server | undefined;
  let port: number;
  let location: string;
  const spooled = async () => (await readdir(location)).length;

  after(async () => {
    await server?.close();
  });
  // Registered after the server's closing: its folder goes once the server is closed.
  const suiteDir = suiteTempDirs();

  before(async () => {
    location = await suiteDir("thaw-upload-socket-");
    const app = await bootstrap({
      controllers: [Uploads],
      logger: memoryLogger(),
      config: {
        server: {
          "max-body-size": 1024,
          multipart: {
            "max-file-size": MAX_FILE,
            "max-request-size": 20 * 1024 * 1024,
            "file-size-threshold": THRESHOLD,
            location,
          },
        },
      },
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true });
    port = server.port;
  });

  it("a file past the threshold arrives whole, and its temporary file is gone after the answer", async () => {
    const file = content(250_000);
    const text = body(file);
    const answer = await exchange(port, head(text.length) + text);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), {
      name: "up.bin",
      size: file.length,
      sum: checksum(file),
    });
    assert.equal(await spooled(), 0);
  });

  it("a client gone mid-file leaves no temporary file", async () => {
    const file = content(250_000);
    const text = body(file);
    const socket: Socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    // Half the file: the server spools it, and waits for the rest.
    await new Promise<void>((resolve) =>
      socket.write(
        Buffer.from(head(text.length) + text.slice(0, 100_000), "latin1"),
        () => resolve(),
      )
    );
    await until(async () => (await spooled()) === 1, "the upload is spooled");
    socket.resetAndDestroy();
    await until(async () => (await spooled()) === 0, "the temporary file is deleted");
    await assertStillServes(port);
  });

  it("a file over max-file-size is 413 before the rest of the body is sent", async () => {
    const file = content(MAX_FILE + 50_000);
    // The declared 10 MiB never come: only an answer made before them ends the exchange.
    const text = await answerBeforeBody(
      port,
      head(10 * 1024 * 1024) + `--B\r\n${partHead}${file}`,
    );
    assert.match(text, /^HTTP\/1\.1 413 /, text);
    assert.ok(
      text.includes(
        `Multipart part 'f' exceeds ${MAX_FILE} bytes (server.multipart.max-file-size)`,
      ),
      text,
    );
    await until(async () => (await spooled()) === 0, "the temporary file is deleted");
    await assertStillServes(port);
  });

  describe("when server.request-timeout passes mid-upload", () => {
    let timedServer: Server | undefined;
    let timedPort: number;
    let timedLocation: string;

    after(async () => {
      await timedServer?.close();
    });
    const timedDir = suiteTempDirs();

    before(async () => {
      timedLocation = await timedDir("thaw-upload-timeout-");
      const app = await bootstrap({
        controllers: [Uploads],
        logger: memoryLogger(),
        config: {
          server: {
            "request-timeout": 300,
            "max-body-size": 1024,
            multipart: { "file-size-threshold": THRESHOLD, location: timedLocation },
          },
        },
      });
      timedServer = await listen(app, {
        port: 0,
        hostname: "127.0.0.1",
        signals: false,
        quiet: true,
      });
      timedPort = timedServer.port;
    });

    it("a chunked upload that stalls is answered 503, and leaves no temporary file", async () => {
      const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
      const text = await answerBeforeBody(
        timedPort,
        "POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
          "Content-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\n" +
          chunk(`--B\r\n${partHead}`) + chunk(content(20_000)),
      );
      assert.match(text, /^HTTP\/1\.1 503 /, text);
      assert.equal((await readdir(timedLocation)).length, 0);
      await assertStillServes(timedPort);
    });
  });

  describe("server.multipart.location, checked before the server serves", () => {
    const refused = async (location: string, why: RegExp) => {
      const app = await bootstrap({
        controllers: [Uploads],
        logger: memoryLogger(),
        config: { server: { multipart: { location } } },
      });
      await assert.rejects(
        listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true }),
        (error: Error) => {
          assert.equal(error.name, "ConfigError");
          assert.match(error.message, /server\.multipart\.location/);
          assert.ok(error.message.includes(JSON.stringify(location)), error.message);
          assert.match(error.message, why);
          return true;
        },
      );
    };

    it("a folder that does not exist is a start-up error naming the key", async () => {
      await using parent = await tempDir("thaw-upload-missing-");
      await refused(join(parent.path, "gone"), /ENOENT|No such file|not found/i);
    });

    it("a file where the folder should be is a start-up error too", async () => {
      await using parent = await tempDir("thaw-upload-file-");
      const file = join(parent.path, "plain");
      await writeFile(file, "");
      await refused(file, /ENOTDIR|Not a directory/i);
    });

    it("a folder that takes files but does not let them go is refused, naming the file left", async () => {
      await using dir = await tempDir("thaw-upload-append-");
      const folder = dir.path;
      // Append-only (root, ext4): a file can be made in it, none deleted, as where a process may
      // create and not delete; upload files would pile up there.
      execFileSync("chattr", ["+a", folder]);
      try {
        const app = await bootstrap({
          controllers: [Uploads],
          logger: memoryLogger(),
          config: { server: { multipart: { location: folder } } },
        });
        let message = "";
        await assert.rejects(
          listen(app, { port: 0, hostname: "127.0.0.1", signals: false, quiet: true }),
          (error: Error) => {
            assert.equal(error.name, "ConfigError");
            message = error.message;
            return true;
          },
        );
        assert.match(message, /server\.multipart\.location/);
        // The check's own file, which the folder keeps: the message says where, to remove it. (The
        // system's reason differs: EPERM on Deno and Node, EFAULT on Bun 1.3.)
        const left = await readdir(folder);
        assert.equal(left.length, 1);
        assert.ok(
          message.includes(`could not remove its file "${join(folder, left[0])}"`),
          message,
        );
      } finally {
        // The folder is removed when the block ends, which the flag would refuse.
        execFileSync("chattr", ["-a", folder]);
      }
    });

    it("a folder it can write serves, and the check leaves nothing in it", async () => {
      await using folder = await tempDir("thaw-upload-ok-");
      const app = await bootstrap({
        controllers: [Uploads],
        logger: memoryLogger(),
        config: { server: { multipart: { location: folder.path } } },
      });
      const served = await listen(app, {
        port: 0,
        hostname: "127.0.0.1",
        signals: false,
        quiet: true,
      });
      await served.close();
      assert.deepEqual(await readdir(folder.path), []);
    });
  });
});
