import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HttpException, HttpRequest } from "../../mod.ts";

function post(body: BodyInit, headers: Record<string, string> = {}): Request {
  return new Request("http://localhost/p?a=1&a=2", { method: "POST", body, headers });
}

describe("HttpRequest", () => {
  it("reads method, path, query, headers and path variables", () => {
    const r = new HttpRequest(post("x", { "X-Id": "7" }), { pathVariables: { id: "7" } });
    assert.equal(r.getMethod(), "POST");
    assert.equal(r.getPath(), "/p");
    assert.equal(r.getQueryParam("a"), "1");
    assert.deepEqual(r.getQueryParams("a"), ["1", "2"]);
    assert.equal(r.getQueryParam("missing"), undefined);
    assert.equal(r.getHeader("x-id"), "7");
    assert.equal(r.getPathVariable("id"), "7");
    assert.equal(r.getPathVariable("toString"), undefined);
  });

  it("reads the body once and gives the same text again", async () => {
    const r = new HttpRequest(post('{"a":1}'));
    assert.deepEqual(await r.json(), { a: 1 });
    assert.equal(await r.text(), '{"a":1}');
  });

  it("refuses a body over the limit, declared or streamed", async () => {
    const declared = new HttpRequest(post("x".repeat(11), { "content-length": "11" }), {
      maxBodySize: 10,
    });
    await assert.rejects(
      declared.text(),
      (e: unknown) => e instanceof HttpException && e.getStatusCode() === 413,
    );
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const streamed = new HttpRequest(
      new Request(
        "http://localhost/",
        { method: "POST", body: endless, duplex: "half" } as RequestInit,
      ),
      { maxBodySize: 4096 },
    );
    await assert.rejects(streamed.text(), /exceeds 4096 bytes/);
    assert.ok(pulled < 10, `read ${pulled} chunks of an endless body`);
  });

  it("counts the body when the declared length is not a number", async () => {
    for (const length of ["abc", "-1", "1e9", ""]) {
      const r = new HttpRequest(post("x".repeat(50), { "content-length": length }), {
        maxBodySize: 10,
      });
      await assert.rejects(r.text(), /exceeds 10 bytes/, `content-length: "${length}"`);
    }
  });

  it("reads a body of declared length within the limit", async () => {
    const r = new HttpRequest(post("héllo", { "content-length": "6" }), { maxBodySize: 6 });
    assert.equal(await r.text(), "héllo");
  });

  it("refuses bytes that are not UTF-8, with or without a declared length", async () => {
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d]);
    await assert.rejects(new HttpRequest(post(bytes)).text(), /not valid UTF-8/);
    const declared = new HttpRequest(post(bytes, { "content-length": "3" }));
    await assert.rejects(declared.text(), /not valid UTF-8/);
  });

  it("keeps a U+FFFD the client sent, beside refusing bytes that only decode to one", async () => {
    const sent = new TextEncoder().encode('{"s":"a\uFFFDb"}');
    assert.equal(await new HttpRequest(post(sent)).text(), '{"s":"a\uFFFDb"}');
    const mixed = new Uint8Array([...sent, 0xff]);
    await assert.rejects(new HttpRequest(post(mixed)).text(), /not valid UTF-8/);
  });

  it("reads rawBody, the bytes a server read already, with the same limit and UTF-8 check", async () => {
    const bytes = new TextEncoder().encode("héllo");
    // The request's own stream says something else: rawBody wins and the stream is left alone.
    const request = post("ignored");
    const r = new HttpRequest(request, { rawBody: bytes, maxBodySize: 6 });
    assert.equal(await r.text(), "héllo");
    assert.equal(request.bodyUsed, false);
    const over = new HttpRequest(post(""), { rawBody: bytes, maxBodySize: 5 });
    await assert.rejects(over.text(), /exceeds 5 bytes/);
    const bad = new HttpRequest(post(""), { rawBody: new Uint8Array([0xc3]) });
    await assert.rejects(bad.text(), /not valid UTF-8/);
  });
});

describe("HttpRequest.getUrl on URLs a server hands over as they are", () => {
  // `new Request` would normalise the URL, so a stand-in carries it as the server gave it.
  const handed = (url: string) =>
    new HttpRequest({ url, headers: new Headers() } as unknown as Request);

  it("never throws, keeps the path as sent, and names no real host it was not given", () => {
    for (
      const [url, path] of [
        ["//[/../../x", "/x"], // dot segments resolved, as routing resolves them
        ["//evil/x", "//evil/x"],
        ["//", "//"],
        ["/a?b=1", "/a"],
        ["http://a b/p?q=1", "/p"],
      ]
    ) {
      const parsed = handed(url).getUrl();
      assert.equal(parsed.pathname, path, url);
      assert.notEqual(parsed.hostname, "evil", url);
      assert.notEqual(parsed.hostname, "localhost", url);
    }
    assert.equal(handed("/a?b=1").getQueryParam("b"), "1");
  });
});

describe("HttpRequest.bytes", () => {
  it("reads the body once, shared with text() whichever asks first, under the same limit", async () => {
    const bytesFirst = new HttpRequest(post("héllo"));
    assert.deepEqual([...await bytesFirst.bytes()], [...new TextEncoder().encode("héllo")]);
    assert.equal(await bytesFirst.text(), "héllo");
    assert.equal(await bytesFirst.bytes(), await bytesFirst.bytes());
    const textFirst = new HttpRequest(post("héllo"));
    assert.equal(await textFirst.text(), "héllo");
    assert.deepEqual([...await textFirst.bytes()], [...new TextEncoder().encode("héllo")]);
    const binary = new HttpRequest(post(new Uint8Array([0xff, 0])));
    assert.deepEqual([...await binary.bytes()], [0xff, 0]);
    await assert.rejects(binary.text(), /not valid UTF-8/);
    await assert.rejects(new HttpRequest(post("123456"), { maxBodySize: 5 }).bytes(), /exceeds 5/);
    const raw = new HttpRequest(post(""), { rawBody: new Uint8Array([1, 2]) });
    assert.deepEqual([...await raw.bytes()], [1, 2]);
  });
});
