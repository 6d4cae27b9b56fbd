// RequestPart binds the parts of a multipart/form-data body: a file part as a File, a text part as
// its converted text. The body limit applies before anything is parsed, and so does the limit on
// the number of parts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  bootstrap,
  HttpRequest,
  PostMapping,
  RequestParam,
  RequestPart,
  RestController,
} from "../../mod.ts";
import { memoryLogger } from "../helpers.ts";

const encoder = new TextEncoder();

@RestController()
class UploadController {
  @PostMapping(
    "/upload",
    RequestPart("avatar", { type: File }),
    RequestPart("name"),
    RequestPart("age", { type: Number, required: false }),
    RequestParam("note", { required: false }),
  )
  async upload(
    avatar: File,
    name: File | string,
    age: number | undefined,
    note: string | undefined,
  ) {
    return {
      file: [avatar instanceof File, avatar.name, avatar.type, avatar.size],
      bytes: [...new Uint8Array(await avatar.arrayBuffer())],
      name,
      age: age ?? null,
      note: note ?? null,
    };
  }
  @PostMapping("/any", RequestPart("p", { required: false }))
  any(p: unknown) {
    if (p === undefined) return { kind: "none" };
    return p instanceof File ? { kind: "file", name: p.name } : { kind: typeof p, value: p };
  }
  @PostMapping(
    "/typed",
    RequestPart("flag", { type: Boolean }),
    RequestPart("day", { type: (t: string) => new Date(t).toISOString() }),
  )
  typed(flag: boolean, day: string) {
    return { flag, day };
  }
  @PostMapping("/text", RequestPart("t"))
  text(t: unknown) {
    return { t };
  }
  @PostMapping("/proto", RequestPart("__proto__"), RequestPart("constructor"))
  proto(a: unknown, b: unknown) {
    return { a, b, polluted: ({} as Record<string, unknown>).polluted ?? null };
  }
  @PostMapping("/request", RequestPart("p"), HttpRequest)
  async request(p: File | string, request: HttpRequest) {
    return { p, length: (await request.bytes()).byteLength };
  }
}

let shared: Application;
const theApp = async () =>
  shared ??= await bootstrap({
    controllers: [UploadController],
    maxBodySize: 1024 * 1024,
    config: { server: { multipart: { "max-request-size": 1024 * 1024 } } },
    logger: memoryLogger(),
  });

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  return { status: res.status, error: (await res.json()).error };
}

const TYPE = "multipart/form-data; boundary=XyZ";

/** A multipart body of `parts` (each its headers and content) with the boundary `XyZ`. */
function multipart(parts: readonly [string, string | Uint8Array][], end = "--XyZ--\r\n") {
  const chunks: Uint8Array[] = [];
  for (const [headers, content] of parts) {
    chunks.push(encoder.encode(`--XyZ\r\n${headers}\r\n\r\n`));
    chunks.push(typeof content === "string" ? encoder.encode(content) : content);
    chunks.push(encoder.encode("\r\n"));
  }
  chunks.push(encoder.encode(end));
  return new Blob(chunks as BlobPart[]);
}

const field = (name: string, content: string | Uint8Array): [string, string | Uint8Array] => [
  `Content-Disposition: form-data; name="${name}"`,
  content,
];

function post(app: Application, path: string, body: BodyInit, type = TYPE) {
  return Promise.resolve(app.fetch(
    new Request(`http://localhost${path}`, {
      method: "POST",
      body,
      headers: { "content-type": type },
    }),
  ));
}

describe("RequestPart", () => {
  it("binds a file part as a File and text parts as converted text, from the platform's FormData", async () => {
    const app = await theApp();
    const form = new FormData();
    form.append(
      "avatar",
      new File([new Uint8Array([137, 80, 78, 71, 0, 255])], "me.png", {
        type: "image/png",
      }),
    );
    form.append("name", "Ada Lovelace");
    form.append("age", "36");
    form.append("note", "from a part");
    const res = await app.fetch(
      new Request("http://localhost/upload", { method: "POST", body: form }),
    );
    assert.deepEqual(await res.json(), {
      file: [true, "me.png", "image/png", 6],
      bytes: [137, 80, 78, 71, 0, 255],
      name: "Ada Lovelace",
      age: 36,
      note: "from a part",
    });
  });

  it("an untyped part is a File when it has a filename, else its text", async () => {
    const app = await theApp();
    const file = await post(
      app,
      "/any",
      multipart([['Content-Disposition: form-data; name="p"; filename="a.txt"', "x"]]),
    );
    assert.deepEqual(await file.json(), { kind: "file", name: "a.txt" });
    const text = await post(app, "/any", multipart([field("p", "v")]));
    assert.deepEqual(await text.json(), { kind: "string", value: "v" });
    const none = await post(app, "/any", multipart([field("q", "v")]));
    assert.deepEqual(await none.json(), { kind: "none" });
    const noBody = await app.fetch(new Request("http://localhost/any", { method: "POST" }));
    assert.deepEqual(await noBody.json(), { kind: "none" });
  });

  it("converts Boolean and function types; a conversion that fails is a 400 naming the part", async () => {
    const app = await theApp();
    const ok = await post(
      app,
      "/typed",
      multipart([field("flag", "TRUE"), field("day", "2024-01-02")]),
    );
    assert.deepEqual(await ok.json(), { flag: true, day: "2024-01-02T00:00:00.000Z" });
    const bad = await post(app, "/typed", multipart([field("flag", "maybe"), field("day", "x")]));
    assert.deepEqual(await errorOf(bad), {
      status: 400,
      error: "Request part 'flag' must be true or false, got \"maybe\"",
    });
    const age = new FormData();
    age.append("avatar", new File(["a"], "a"));
    age.append("name", "n");
    age.append("age", "1.5");
    const res = await app.fetch(
      new Request("http://localhost/upload", { method: "POST", body: age }),
    );
    assert.deepEqual(await errorOf(res), {
      status: 400,
      error: "Request part 'age' must be an integer, got \"1.5\"",
    });
  });

  it("a missing required part is a 400 naming it; a text part where a file is wanted, and the reverse, too", async () => {
    const app = await theApp();
    assert.deepEqual(await errorOf(await post(app, "/upload", multipart([field("name", "n")]))), {
      status: 400,
      error: "Request part 'avatar' is required",
    });
    assert.deepEqual(
      await errorOf(
        await post(app, "/upload", multipart([field("avatar", "text"), field("name", "n")])),
      ),
      { status: 400, error: "Request part 'avatar' must be a file (a part with a filename)" },
    );
    const fileAsText = await post(
      app,
      "/typed",
      multipart([
        ['Content-Disposition: form-data; name="flag"; filename="f"', "true"],
        field("day", "2024-01-01"),
      ]),
    );
    assert.deepEqual(await errorOf(fileAsText), {
      status: 400,
      error: "Request part 'flag' must be a value, not a file",
    });
    const noBody = await app.fetch(new Request("http://localhost/upload", { method: "POST" }));
    assert.deepEqual(await errorOf(noBody), {
      status: 400,
      error: "Request part 'avatar' is required",
    });
  });

  it("a body that is not multipart/form-data is 415; a Content-Encoding too", async () => {
    const app = await theApp();
    for (const type of ["application/json", "application/x-www-form-urlencoded", "text/plain"]) {
      assert.deepEqual(await errorOf(await post(app, "/text", "t=1", type)), {
        status: 415,
        error: `Content-Type must be multipart/form-data, got ${JSON.stringify(type)}`,
      });
    }
    const noType = new Request("http://localhost/text", { method: "POST", body: "t=1" });
    noType.headers.delete("content-type");
    assert.equal((await app.fetch(noType)).status, 415);
    const gzip = await app.fetch(
      new Request("http://localhost/text", {
        method: "POST",
        body: multipart([field("t", "1")]),
        headers: { "content-type": TYPE, "content-encoding": "gzip" },
      }),
    );
    assert.deepEqual(await errorOf(gzip), {
      status: 415,
      error: 'Content-Encoding "gzip" is not supported; send the body as it is',
    });
    assert.deepEqual(
      await errorOf(await post(app, "/text", multipart([field("t", "1")]), `${TYPE}, text/plain`)),
      { status: 400, error: `Content-Type must be given once, got "${TYPE}, text/plain"` },
    );
  });

  it("two parts share one parse, and a handler's HttpRequest still reads a body of declared length", async () => {
    const app = await theApp();
    const body = multipart([field("p", "v")]);
    // A body of unknown length is parsed as it arrives (multipart_upload_test.ts): only one whose
    // length is declared, within server.max-body-size, is read whole and kept.
    const res = await app.fetch(
      new Request("http://localhost/request", {
        method: "POST",
        body,
        headers: { "content-type": TYPE, "content-length": String(body.size) },
      }),
    );
    assert.deepEqual(await res.json(), { p: "v", length: body.size });
  });

  it("__proto__ and constructor parts bind as plain text and pollute nothing", async () => {
    const app = await theApp();
    const res = await post(
      app,
      "/proto",
      multipart([
        field("__proto__", '{"polluted":1}'),
        field("constructor", "c"),
        field("constructor[prototype][polluted]", "1"),
      ]),
    );
    assert.deepEqual(await res.json(), { a: '{"polluted":1}', b: "c", polluted: null });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe("hostile multipart bodies", () => {
  it("10 MB under a 1 MiB max-request-size is 413 before parsing: a declared length is never read", async () => {
    const app = await theApp();
    const pulls: number[] = [];
    const declared = new Request("http://localhost/text", {
      method: "POST",
      headers: { "content-type": TYPE, "content-length": String(10 * 1024 * 1024) },
      body: new ReadableStream<Uint8Array>({
        pull(controller) {
          pulls.push(1);
          controller.enqueue(new Uint8Array(64 * 1024));
        },
      }, { highWaterMark: 0 }),
      duplex: "half",
    } as RequestInit);
    // Some runtimes drop a Content-Length given with a stream; then it is counted as it comes.
    const res = await app.fetch(declared);
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: "Multipart body exceeds 1048576 bytes (server.multipart.max-request-size)",
    });
    if (declared.headers.get("content-length") !== null) assert.equal(pulls.length, 0);
    else assert.ok(pulls.length <= 18, `pulled ${pulls.length} chunks`);
  });

  it("10 MB chunked under a 1 MiB max-request-size is 413 after reading at most the limit", async () => {
    const app = await theApp();
    // A well-formed start, then 10 MB of one part that never ends: the limit answers first.
    const head = encoder.encode('--XyZ\r\nContent-Disposition: form-data; name="t"\r\n\r\n');
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let pulled = 0;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = sent++ === 0 ? head : chunk;
        if (sent > 160) return controller.close();
        pulled += next.byteLength;
        controller.enqueue(next);
      },
    }, { highWaterMark: 0 });
    const res = await app.fetch(
      new Request("http://localhost/text", {
        method: "POST",
        headers: { "content-type": TYPE },
        body,
        duplex: "half",
      } as RequestInit),
    );
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: "Multipart body exceeds 1048576 bytes (server.multipart.max-request-size)",
    });
    assert.ok(pulled <= 1024 * 1024 + 2 * chunk.byteLength, `pulled ${pulled}`);
  });

  it("a part without a name is a 400 saying so", async () => {
    const app = await theApp();
    const res = await post(
      app,
      "/text",
      multipart([field("t", "1"), ["Content-Disposition: form-data", "x"]]),
    );
    assert.deepEqual(await errorOf(res), {
      status: 400,
      error:
        'Malformed multipart body: part 2 has no name (Content-Disposition: form-data; name="...")',
    });
  });

  it("10,000 tiny parts are refused with 413 at 1000 parts", async () => {
    const app = await theApp();
    const parts = Array.from({ length: 10_000 }, () => field("t", ""));
    const res = await post(app, "/text", multipart(parts));
    assert.deepEqual(await errorOf(res), {
      status: 413,
      error: "Multipart body has more than 1000 parts (server.multipart.max-parts)",
    });
    const thousand = await post(app, "/text", multipart(parts.slice(0, 1000)));
    assert.deepEqual(await thousand.json(), { t: "" });
  });

  it("a boundary that never ends, a missing boundary parameter and garbage are 400", async () => {
    const app = await theApp();
    const cases: [BodyInit, string, string][] = [
      [
        multipart([field("t", "1")], "--XyZ\r\n" + "x".repeat(10_000)),
        TYPE,
        "Malformed multipart body: it ends before its closing boundary",
      ],
      [
        multipart([field("t", "1")], ""),
        TYPE,
        "Malformed multipart body: it ends before its closing boundary",
      ],
      [
        multipart([field("t", "1")]),
        "multipart/form-data",
        "Content-Type multipart/form-data needs a boundary parameter",
      ],
      [
        "garbage, not multipart at all",
        TYPE,
        "Malformed multipart body: it does not start with its boundary",
      ],
    ];
    for (const [body, type, error] of cases) {
      assert.deepEqual(await errorOf(await post(app, "/text", body, type)), { status: 400, error });
    }
  });

  it("every byte value in a part's text: ASCII binds exactly, a byte past it is a 400 naming the part", async () => {
    const app = await theApp();
    for (let byte = 0; byte < 256; byte++) {
      const res = await post(
        app,
        "/text",
        multipart([field("t", new Uint8Array([0x61, byte, 0x62]))]),
      );
      if (byte < 0x80) {
        assert.deepEqual(await res.json(), { t: `a${String.fromCharCode(byte)}b` }, String(byte));
      } else {
        assert.deepEqual(await errorOf(res), {
          status: 400,
          error: "Request part 't' is not valid UTF-8",
        }, String(byte));
      }
      // Percent-encoding means nothing in a part: it is kept as sent.
      const encoded = `%${byte.toString(16).padStart(2, "0")}`;
      const kept = await post(app, "/text", multipart([field("t", encoded)]));
      assert.deepEqual(await kept.json(), { t: encoded });
    }
    const utf8 = await post(app, "/text", multipart([field("t", "é😀\u2028")]));
    assert.deepEqual(await utf8.json(), { t: "é😀\u2028" });
  });

  it("a leading byte-order mark is text the client sent: a part keeps it, as a parameter too", async () => {
    const app = await theApp();
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x78]); // U+FEFF x
    const part = await post(app, "/text", multipart([field("t", bom)]));
    assert.deepEqual(await part.json(), { t: "\ufeffx" });
    const param = await post(
      app,
      "/upload",
      multipart([
        ['Content-Disposition: form-data; name="avatar"; filename="a"', "x"],
        field("name", "n"),
        field("note", bom),
      ]),
    );
    assert.equal((await param.json()).note, "\ufeffx");
    // Nor is one dropped before a header's value.
    const header = await post(
      app,
      "/text",
      multipart([['Content-Disposition:\ufeffform-data; name="t"', "x"]]),
    );
    assert.deepEqual(await errorOf(header), {
      status: 400,
      error: "Malformed multipart body: part 1 is not form-data",
    });
  });
});
