// Form bodies and multipart parts over a real socket on whichever runtime runs the suite: what
// binds, what is refused, and that a body over the limit is answered before it has been sent.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { connect } from "node:net";
import {
  bootstrap,
  GetMapping,
  PostMapping,
  RequestParam,
  RequestPart,
  RestController,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { assertStillServes, errorOf, exchange, request } from "./raw_client.ts";

@RestController()
class Forms {
  @GetMapping("/health")
  health(): string {
    return "up";
  }
  @PostMapping("/param", RequestParam("v"))
  param(v: string): string {
    return JSON.stringify(v);
  }
  @PostMapping("/proto", RequestParam("__proto__"), RequestParam("constructor[prototype][p]"))
  proto(a: unknown, b: unknown): unknown {
    return { a, b, polluted: ({} as Record<string, unknown>).p ?? null };
  }
  @PostMapping("/part", RequestPart("t"))
  part(t: File | string): string {
    return JSON.stringify(t);
  }
  @PostMapping("/upload", RequestPart("f", { type: File }), RequestPart("n", { type: Number }))
  async upload(f: File, n: number): Promise<unknown> {
    return { name: f.name, type: f.type, bytes: [...new Uint8Array(await f.arrayBuffer())], n };
  }
}

const LIMIT = 1024 * 1024;

/** A POST of `body` (latin1, one byte per character) with `type`, its length declared. */
const post = (path: string, type: string, body: string) =>
  request("POST", path, [`Content-Type: ${type}`, `Content-Length: ${body.length}`], body);

/** A multipart body (latin1) of `[disposition parameters, content]` parts, boundary `B`. */
const multipart = (parts: readonly [string, string][], end = "--B--\r\n") =>
  parts.map(([params, content]) =>
    `--B\r\nContent-Disposition: form-data; ${params}\r\n\r\n${content}\r\n`
  ).join("") + end;

const MULTIPART = "multipart/form-data; boundary=B";
const FORM = "application/x-www-form-urlencoded";

/**
 * Writes `head` and then body bytes up to `send` (not the whole declared body), and resolves with
 * the first response as soon as it is whole (its `Content-Length`), without closing first: a
 * server that answers before reading the body answers here; one that waits for the rest never
 * does, and the 10 s deadline fails the test.
 */
function answerBeforeBody(port: number, head: string, send: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(received.toString())}`));
    }, 10_000);
    const done = (text: string) => {
      clearTimeout(deadline);
      socket.destroy();
      resolve(text);
    };
    socket.on("error", () => {}); // the server may reset once it answered: "close" reports it
    socket.on("close", () => done(received.toString("latin1")));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      if (split === -1) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split));
      if (length !== null && text.length >= split + 4 + Number(length[1])) done(text);
    });
    socket.on("connect", () => {
      socket.write(head);
      socket.write(Buffer.alloc(send, 0x61));
    });
  });
}

describe(`form bodies and multipart parts over a real socket on ${RUNTIME}`, () => {
  let server: Server;
  let port: number;

  before(async () => {
    const app = await bootstrap({
      controllers: [Forms],
      logger: memoryLogger(),
      maxBodySize: LIMIT,
      config: { server: { multipart: { "max-request-size": LIMIT } } },
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1" });
    port = server.port;
  });
  after(() => server.close());

  it("binds a urlencoded field and multipart parts, a file's bytes as sent", async () => {
    const form = await exchange(port, post("/param", FORM, "x=1&v=caf%C3%A9+%2B"));
    assert.equal(form.body, '"café +"');
    const file = "\x00\x01\r\n\xff--B-";
    const upload = await exchange(
      port,
      post(
        "/upload",
        MULTIPART,
        multipart([
          ['name="f"; filename="a b.bin"\r\nContent-Type: application/octet-stream', file],
          ['name="n"', "42"],
        ]),
      ),
    );
    assert.equal(upload.status, 200, upload.body);
    assert.deepEqual(JSON.parse(upload.body), {
      name: "a b.bin",
      type: "application/octet-stream",
      bytes: [...Buffer.from(file, "latin1")],
      n: 42,
    });
  });

  it("__proto__ and constructor[prototype] fields bind as plain strings and pollute nothing", async () => {
    const answer = await exchange(
      port,
      post("/proto", FORM, "__proto__=x&constructor%5Bprototype%5D%5Bp%5D=1"),
    );
    assert.deepEqual(JSON.parse(answer.body), { a: "x", b: "1", polluted: null });
    assert.equal(({} as Record<string, unknown>).p, undefined);
  });

  it("10 MB declared under a 1 MiB limit: the 413 comes before the body has been sent", async () => {
    for (const type of [MULTIPART, FORM]) {
      const path = type === FORM ? "/param" : "/part";
      const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n` +
        `Content-Length: ${10 * 1024 * 1024}\r\n\r\n`;
      const answer = await answerBeforeBody(port, head, 64 * 1024);
      assert.match(answer, /^HTTP\/1\.1 413 /, answer);
      // A multipart body has its own limit, apart from the JSON and form one.
      const error = type === FORM
        ? `Request body exceeds ${LIMIT} bytes`
        : `Multipart body exceeds ${LIMIT} bytes (server.multipart.max-request-size)`;
      assert.ok(answer.includes(error), answer);
    }
    await assertStillServes(port);
  });

  it("10 MB chunked under a 1 MiB limit: the 413 comes after the limit, before the rest is sent", async () => {
    const head = "POST /part HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B" +
      "\r\nTransfer-Encoding: chunked\r\n\r\n";
    // Two chunks of 1 MiB: one past the limit, and 8 MB still to come that are never written.
    const chunk = `${LIMIT.toString(16)}\r\n${"a".repeat(LIMIT)}\r\n`;
    const answer = await answerBeforeBody(port, head + chunk + chunk, 0);
    assert.match(answer, /^HTTP\/1\.1 413 /, answer);
    await assertStillServes(port);
  });

  it("a part without a name, a boundary that never ends, and 10,000 parts are refused", async () => {
    const nameless = await exchange(
      port,
      post("/part", MULTIPART, multipart([['name="t"', "1"], ['filename="x"', "2"]])),
    );
    assert.deepEqual(errorOf(nameless), {
      status: 400,
      error:
        'Malformed multipart body: part 2 has no name (Content-Disposition: form-data; name="...")',
    });
    const endless = await exchange(
      port,
      post("/part", MULTIPART, multipart([['name="t"', "1"]], "--B\r\n" + "x".repeat(100_000))),
    );
    assert.deepEqual(errorOf(endless), {
      status: 400,
      error:
        "Malformed multipart body: part 2's headers are not ended by an empty line within 16384 bytes",
    });
    const many = await exchange(
      port,
      post("/part", MULTIPART, multipart(Array.from({ length: 10_000 }, () => ['name="t"', ""]))),
    );
    assert.deepEqual(errorOf(many), {
      status: 413,
      error: "Multipart body has more than 1000 parts (server.multipart.max-parts)",
    });
    await assertStillServes(port);
  });

  it("every byte value: percent-encoded in a field, raw in a part; ASCII binds, the rest is a 400", async () => {
    for (let byte = 0; byte < 256; byte++) {
      const hex = byte.toString(16).padStart(2, "0");
      const form = await exchange(port, post("/param", FORM, `v=a%${hex}b`));
      const part = await exchange(
        port,
        post("/part", MULTIPART, multipart([['name="t"', `a${String.fromCharCode(byte)}b`]])),
      );
      if (byte < 0x80) {
        const expected = JSON.stringify(`a${String.fromCharCode(byte)}b`);
        assert.equal(form.body, expected, `form ${hex}`);
        assert.equal(part.body, expected, `part ${hex}`);
      } else {
        assert.deepEqual(errorOf(form), {
          status: 400,
          error: "Request parameter 'v' is not valid UTF-8 (its percent-encoded bytes)",
        }, `form ${hex}`);
        assert.deepEqual(errorOf(part), {
          status: 400,
          error: "Request part 't' is not valid UTF-8",
        }, `part ${hex}`);
      }
    }
    await assertStillServes(port);
  });
});
