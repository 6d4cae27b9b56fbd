// RequestParam reads the query first and then, on a request that carries one, the
// `application/x-www-form-urlencoded` (or `multipart/form-data`) body, as Spring does: read once,
// under the body limit, decoded by the query's rules.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  bootstrap,
  DefinitionError,
  DeleteMapping,
  GetMapping,
  HttpRequest,
  PatchMapping,
  PostMapping,
  PutMapping,
  RequestBody,
  RequestParam,
  RequestPart,
  RestController,
} from "../../mod.ts";
import { formBodyWork } from "../../src/http/query_string.ts";
import { countDecodes } from "../decoder_spy.ts";
import { call, memoryLogger } from "../helpers.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

@RestController()
class FormController {
  @PostMapping(
    "/form",
    RequestParam("a"),
    RequestParam("n", { type: Number, default: 0 }),
    RequestParam("opt", { required: false }),
  )
  form(a: string, n: number, opt: string | undefined) {
    return { a, n, opt: opt ?? null };
  }
  @PutMapping("/form", RequestParam("a"))
  put(a: string) {
    return { a };
  }
  @PatchMapping("/form", RequestParam("a"))
  patch(a: string) {
    return { a };
  }
  @DeleteMapping("/form", RequestParam("a"))
  remove(a: string) {
    return { a };
  }
  @GetMapping("/form", RequestParam("a", { default: "none" }))
  get(a: string) {
    return { a };
  }
  @PostMapping("/one", RequestParam("v"))
  one(v: string) {
    return v;
  }
  @PostMapping(
    "/proto",
    RequestParam("__proto__"),
    RequestParam("constructor[prototype][polluted]"),
    RequestParam("constructor"),
    RequestParam("prototype"),
  )
  proto(a: unknown, b: unknown, c: unknown, d: unknown) {
    return {
      values: [a, b, c, d],
      types: [a, b, c, d].map((v) => typeof v),
      polluted: ({} as Record<string, unknown>).polluted ?? null,
    };
  }
  @PostMapping("/with-request", RequestParam("a"), HttpRequest, RequestParam("b"))
  async withRequest(a: string, request: HttpRequest, b: string) {
    return { a, b, text: await request.text() };
  }
  @PostMapping("/json/{id}", RequestParam("dry", { type: Boolean, default: false }), RequestBody())
  json(dry: boolean, body: unknown) {
    return { dry, body };
  }
}

let shared: Application;
const theApp = async () =>
  shared ??= await bootstrap({
    controllers: [FormController],
    maxBodySize: 1024,
    logger: memoryLogger(),
  });

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  return { status: res.status, error: (await res.json()).error };
}

/** A request whose body is a stream that counts the bytes the app pulled from it. */
function countedRequest(
  url: string,
  headers: Record<string, string>,
  chunk: Uint8Array,
  chunks: number,
): { request: Request; pulled: () => number } {
  let pulled = 0;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close();
      sent++;
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
  const request = new Request(url, {
    method: "POST",
    headers,
    body,
    duplex: "half",
  } as RequestInit);
  return { request, pulled: () => pulled };
}

describe("RequestParam from a form body", () => {
  it("binds and converts fields of an application/x-www-form-urlencoded body", async () => {
    const app = await theApp();
    const res = await call(app, "POST", "/form", {
      body: "a=caf%C3%A9+x&n=%2B7&opt=",
      headers: FORM,
    });
    assert.deepEqual(await res.json(), { a: "café x", n: 7, opt: "" });
    const defaulted = await call(app, "POST", "/form", { body: "a=1", headers: FORM });
    assert.deepEqual(await defaulted.json(), { a: "1", n: 0, opt: null });
  });

  it("the query comes first: a parameter it carries is never read from the body", async () => {
    const app = await theApp();
    const res = await call(app, "POST", "/form?a=query&n=1", {
      body: "a=body&n=2&opt=o",
      headers: FORM,
    });
    assert.deepEqual(await res.json(), { a: "query", n: 1, opt: "o" });
    // Every value in the query: the body is never touched.
    const request = new Request("http://localhost/form?a=q&n=3&opt=x", {
      method: "POST",
      headers: FORM,
      body: "a=b",
    });
    assert.deepEqual(await (await app.fetch(request)).json(), { a: "q", n: 3, opt: "x" });
    assert.equal(request.bodyUsed, false);
  });

  it("the body is read once for every parameter, and a handler's HttpRequest still reads it", async () => {
    const app = await theApp();
    const res = await call(app, "POST", "/with-request", { body: "b=2&a=1", headers: FORM });
    assert.deepEqual(await res.json(), { a: "1", b: "2", text: "b=2&a=1" });
  });

  it("PUT, PATCH and DELETE read a form body too; GET never reads one", async () => {
    const app = await theApp();
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const res = await call(app, method, "/form", { body: "a=x", headers: FORM });
      assert.deepEqual(await res.json(), { a: "x" }, method);
    }
    assert.deepEqual(await (await call(app, "GET", "/form")).json(), { a: "none" });
  });

  it("a body of another type is not read: the parameter is missing", async () => {
    const app = await theApp();
    for (
      const type of ["text/plain", "application/json", "application/x-www-form-urlencoded, a/b"]
    ) {
      const request = new Request("http://localhost/one", {
        method: "POST",
        headers: { "content-type": type },
        body: "v=1",
      });
      const res = await app.fetch(request);
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: "Request parameter 'v' is required",
      }, type);
      assert.equal(request.bodyUsed, false, type);
    }
    assert.deepEqual(await errorOf(await call(app, "POST", "/one")), {
      status: 400,
      error: "Request parameter 'v' is required",
    });
  });

  it("a route with RequestBody() reads its parameters from the query alone", async () => {
    const app = await theApp();
    const res = await call(app, "POST", "/json/1?dry=1", { json: { x: 1 } });
    assert.deepEqual(await res.json(), { dry: true, body: { x: 1 } });
    const form = await call(app, "POST", "/json/1", { body: "dry=true", headers: FORM });
    assert.equal(form.status, 415);
  });

  it("a form body over the limit is 413, declared or counted, and is not read past the limit", async () => {
    const app = await theApp();
    const big = `v=${"x".repeat(2000)}`;
    const declared = await call(app, "POST", "/one", { body: big, headers: FORM });
    assert.deepEqual(await errorOf(declared), {
      status: 413,
      error: "Request body exceeds 1024 bytes",
    });
    const chunk = new TextEncoder().encode("v=" + "x".repeat(254));
    const counted = countedRequest("http://localhost/one", FORM, chunk, 40_000); // 10 MB
    const res = await app.fetch(counted.request);
    assert.deepEqual(await errorOf(res), { status: 413, error: "Request body exceeds 1024 bytes" });
    assert.ok(counted.pulled() <= 1024 + 2 * chunk.byteLength, `pulled ${counted.pulled()}`);
  });

  it("a Content-Encoding or a charset other than UTF-8 is 415 naming it", async () => {
    const app = await theApp();
    const gzip = await call(app, "POST", "/one", {
      body: "v=1",
      headers: { ...FORM, "content-encoding": "gzip" },
    });
    assert.deepEqual(await errorOf(gzip), {
      status: 415,
      error: 'Content-Encoding "gzip" is not supported; send the body as it is',
    });
    const latin = await call(app, "POST", "/one", {
      body: "v=1",
      headers: { "content-type": "application/x-www-form-urlencoded; charset=iso-8859-1" },
    });
    assert.deepEqual(await errorOf(latin), {
      status: 415,
      error: 'charset "iso-8859-1" is not supported; form bodies are read as UTF-8',
    });
    const utf8 = await call(app, "POST", "/one", {
      body: "v=1",
      headers: { "content-type": "Application/X-WWW-Form-Urlencoded; Charset=UTF-8" },
    });
    assert.equal(await utf8.text(), "1");
  });

  it("every byte value percent-encoded: ASCII binds exactly, bytes past it are a 400 naming the parameter", async () => {
    const app = await theApp();
    for (let byte = 0; byte < 256; byte++) {
      const encoded = `%${byte.toString(16).padStart(2, "0").toUpperCase()}`;
      const res = await call(app, "POST", "/one", { body: `v=a${encoded}b`, headers: FORM });
      if (byte < 0x80) {
        assert.equal(res.status, 200, encoded);
        assert.equal(await res.text(), `a${String.fromCharCode(byte)}b`, encoded);
      } else {
        assert.deepEqual(await errorOf(res), {
          status: 400,
          error: "Request parameter 'v' is not valid UTF-8 (its percent-encoded bytes)",
        }, encoded);
      }
      // The query, read by the same rules, answers the same.
      const query = await call(app, "POST", `/one?v=a${encoded}b`);
      assert.equal(query.status, res.status, `query ${encoded}`);
    }
  });

  it("raw bytes in a body are read as their percent-encoding: UTF-8 binds, other bytes are a 400", async () => {
    const app = await theApp();
    const raw = (bytes: number[]) =>
      call(app, "POST", "/one", {
        body: new Uint8Array([0x76, 0x3d, ...bytes]), // v=
        headers: FORM,
      });
    assert.equal(await (await raw([0x63, 0xc3, 0xa9, 0x25, 0x7e])).text(), "cé%~");
    for (const bytes of [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80]]) {
      assert.deepEqual(await errorOf(await raw(bytes)), {
        status: 400,
        error: "Request parameter 'v' is not valid UTF-8 (its percent-encoded bytes)",
      }, String(bytes));
    }
    // A leading byte-order mark, raw or encoded, is part of the first name: no `v` is sent.
    for (const body of [new Uint8Array([0xef, 0xbb, 0xbf, 0x76, 0x3d, 0x31]), "%EF%BB%BFv=1"]) {
      const res = await call(app, "POST", "/one", { body, headers: FORM });
      assert.deepEqual(await errorOf(res), {
        status: 400,
        error: "Request parameter 'v' is required",
      }, String(body));
    }
    // Another parameter's bad bytes do not matter.
    const other = await call(app, "POST", "/one", { body: "x=%FF&v=ok", headers: FORM });
    assert.equal(await other.text(), "ok");
  });

  it("__proto__, constructor and prototype keys bind as plain strings and pollute nothing", async () => {
    const app = await theApp();
    const body = "__proto__=x&constructor[prototype][polluted]=1&constructor=c&prototype=p" +
      "&__proto__[polluted]=2";
    const res = await call(app, "POST", "/proto", { body, headers: FORM });
    assert.deepEqual(await res.json(), {
      values: ["x", "1", "c", "p"],
      types: ["string", "string", "string", "string"],
      polluted: null,
    });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.toString.call({}), "[object Object]");
    const encoded = await call(app, "POST", "/proto", {
      body: "%5F_proto__=e&constructor%5Bprototype%5D%5Bpolluted%5D=3&constructor=c&prototype=p",
      headers: FORM,
    });
    assert.deepEqual((await encoded.json()).values, ["e", "3", "c", "p"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("a multipart body's text parts are parameters too", async () => {
    const app = await theApp();
    const form = new FormData();
    form.append("a", "from part");
    form.append("n", "5");
    const res = await app.fetch(
      new Request("http://localhost/form", { method: "POST", body: form }),
    );
    assert.deepEqual(await res.json(), { a: "from part", n: 5, opt: null });
  });
});

// A body's cost is counted in work, not time: split once per request, whatever the number of
// parameters; bad bytes told without an exception; no decode once a byte.
describe("the cost of a urlencoded body", () => {
  @RestController()
  class Login {
    @PostMapping("/login", RequestParam("user"), RequestParam("password"))
    login(user: string, password: string) {
      return { user, password };
    }
    @PostMapping(
      "/many",
      ...["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"].map((name) =>
        RequestParam(name, { required: false })
      ),
    )
    many(...values: unknown[]) {
      return values;
    }
  }
  const loginApp = () => bootstrap({ controllers: [Login], logger: memoryLogger() });

  it("every parameter of a request reads one split of its body", async () => {
    const app = await loginApp();
    const body = Array.from({ length: 1000 }, (_, i) => `x%5F${i}=${i}`).join("&") + "&p7=7";
    const before = formBodyWork.pairs;
    const res = await call(app, "POST", "/many", { body, headers: FORM });
    assert.deepEqual(await res.json(), [null, null, null, null, null, null, null, "7"]);
    assert.equal(formBodyWork.pairs - before, 1001);
  });

  it("a 1 MiB body of &%FF or of raw &\\xff: one split, no exception, no decode a byte", async () => {
    const app = await loginApp();
    const raw = new Uint8Array(1 << 20).map((_, i) => i % 2 === 0 ? 0x26 : 0xff);
    for (const [body, pairs] of [["&%FF".repeat(1 << 18), (1 << 18) + 1], [raw, (1 << 19) + 1]]) {
      const before = formBodyWork.pairs;
      let res: Response | undefined;
      const counts = await countDecodes(async () => {
        res = await call(app, "POST", "/login?user=a", { body: body as BodyInit, headers: FORM });
      });
      assert.deepEqual(await errorOf(res as Response), {
        status: 400,
        error: "Request parameter 'password' is required",
      });
      assert.equal(formBodyWork.pairs - before, pairs);
      assert.equal(counts.throws, 0);
      assert.ok(counts.calls <= 4, `${counts.calls} decodes`);
    }
  });
});

describe("one body per route", () => {
  it("RequestBody() and RequestPart() on one route stop bootstrap, naming the method", async () => {
    @RestController()
    class Both {
      @PostMapping("/both", RequestBody(), RequestPart("file"))
      both(_body: unknown, _file: unknown) {}
    }
    await assert.rejects(
      bootstrap({ controllers: [Both] }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.message ===
          'Both.both (@POST "/both"): a request has one body; RequestBody() and RequestPart() ' +
            "cannot both read it",
    );
  });
});
