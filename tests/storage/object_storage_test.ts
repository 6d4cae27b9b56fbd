// The core every store shares, on a driver that records its calls: keys and options refused before
// any I/O, errors named, bodies of every kind, listings read a page at a time, responses planned.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ObjectStorage } from "../../src/storage/object_storage.ts";
import { StorageError } from "../../src/storage/storage_error.ts";
import { StorageFault } from "../../src/storage/storage_driver.ts";
import { MemoryDriver } from "./memory_driver.ts";

const text = (body: ReadableStream<Uint8Array> | undefined) => new Response(body).text();

function storageOf(driver = new MemoryDriver()): [ObjectStorage, MemoryDriver] {
  return [new ObjectStorage("files", driver), driver];
}

describe("ObjectStorage", () => {
  it("refuses a hostile key before any I/O, naming it safely", async () => {
    const [storage, driver] = storageOf();
    const keys = [
      "",
      "../etc/passwd",
      "/abs",
      "a/./b",
      "a\u0000b",
      "a\r\nb",
      "x".repeat(1025),
      "\ud800",
    ];
    for (const key of keys) {
      for (
        const attempt of [
          () => storage.put(key, "x"),
          () => storage.get(key),
          () => storage.head(key),
          () => storage.delete(key),
          () => storage.copy(key, "ok"),
          () => storage.copy("ok", key),
          () => storage.signedUrl(key, { expires: "1m" }),
        ]
      ) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof StorageError, String(error));
          assert.equal(error.kind, "key");
          assert.equal(error.store, "files");
          // deno-lint-ignore no-control-regex -- the characters no message may hold
          assert.doesNotMatch(error.message, /[\u0000-\u001f]/);
          return true;
        });
      }
    }
    assert.deepEqual(driver.calls, []);
    await assert.rejects(storage.list("../").next(), { name: "StorageError", kind: "key" });
    assert.deepEqual(driver.calls, []);
  });

  it("says which store, which operation and which key failed", async () => {
    const [storage, driver] = storageOf();
    driver.head = () => Promise.reject(new StorageFault("unavailable", "the store did not answer"));
    const error = await storage.head("a/b.txt").catch((error) => error);
    assert.ok(error instanceof StorageError);
    assert.equal(error.message, 'storage "files": head "a/b.txt": the store did not answer');
    assert.equal(error.kind, "unavailable");
    assert.equal(error.operation, "head");
    assert.ok(error.cause instanceof StorageFault);
    // A TypeError of the platform (fetch's, for a dropped connection) is I/O, not a caller's option.
    driver.delete = () => Promise.reject(new TypeError("fetch failed"));
    await assert.rejects(storage.delete("a"), {
      kind: "io",
      message: 'storage "files": delete "a": fetch failed',
    });
  });

  it("refuses wrong options before any I/O", async () => {
    const [storage, driver] = storageOf();
    await assert.rejects(storage.put("a", "x", { contentType: "text/plain\r\nx: 1" }), {
      kind: "option",
    });
    await assert.rejects(storage.put("a", "x", { metadata: { "a b": "c" } }), { kind: "option" });
    await assert.rejects(storage.put("a", 42 as unknown as string), { kind: "option" });
    await assert.rejects(storage.get("a", { range: { offset: -1 } }), { kind: "option" });
    await assert.rejects(storage.list("", { limit: 0 }).next(), { kind: "option" });
    await assert.rejects(storage.signedUrl("a", { expires: "8d" }), { kind: "option" });
    await assert.rejects(storage.signedUrl("a", { expires: "1m" }), {
      kind: "option",
      message: 'storage "files": signedUrl "a": a file store cannot sign URLs',
    });
    assert.deepEqual(driver.calls, []);
  });

  it("takes text, bytes, buffers, blobs and streams, each with its media type", async () => {
    const [storage, driver] = storageOf();
    const bodies: [unknown, string][] = [
      ["héllo", "text/plain; charset=utf-8"],
      [new TextEncoder().encode("héllo"), "application/octet-stream"],
      [new TextEncoder().encode("héllo").buffer, "application/octet-stream"],
      [new Blob(["héllo"], { type: "text/markdown" }), "text/markdown"],
      [new Blob(["héllo"], { type: "bad type\r\n" }), "application/octet-stream"],
      [new Response("héllo").body, "application/octet-stream"],
    ];
    for (const [i, [body, type]] of bodies.entries()) {
      const info = await storage.put(`k${i}`, body as string);
      assert.equal(info.contentType, type, `body ${i}`);
      assert.equal(await text((await storage.get(`k${i}`))?.body), "héllo");
    }
    const given = await storage.put("typed", "x", {
      contentType: "text/csv",
      metadata: { Who: "ada" },
    });
    assert.deepEqual([given.contentType, given.metadata], ["text/csv", { who: "ada" }]);
    assert.equal(driver.objects.size, bodies.length + 1);
  });

  it("lists page by page, to the limit, and stops a store that repeats a page", async () => {
    const [storage, driver] = storageOf();
    for (let i = 0; i < 2345; i++) {
      driver.store(`k/${String(i).padStart(5, "0")}`, new Uint8Array(1));
    }
    driver.store("other", new Uint8Array(1));
    const keys: string[] = [];
    for await (const object of storage.list("k/")) keys.push(object.key);
    assert.equal(keys.length, 2345);
    assert.deepEqual(keys, [...keys].sort());
    assert.deepEqual(driver.calls.filter((call) => call.startsWith("list")).length, 3);
    driver.calls.length = 0;
    const limited: string[] = [];
    for await (const object of storage.list("k/", { limit: 1001 })) limited.push(object.key);
    assert.deepEqual(limited, keys.slice(0, 1001));
    assert.deepEqual(driver.calls, ["list k/ 1000 ", "list k/ 1 k/00999"]);
    // A store that hands back the token it gave before, with empty pages.
    driver.list = () => Promise.resolve({ objects: [], next: "same" });
    const listing = async () => {
      for await (const _ of storage.list("k/")) { /* read to the end */ }
    };
    await assert.rejects(listing(), { kind: "invalid", message: /listed a page twice/ });
  });

  it("answers a request: ranges, conditions, and 404 for a key no store takes", async () => {
    const [storage, driver] = storageOf();
    const info = driver.store("doc.txt", new TextEncoder().encode("0123456789"), "text/plain");
    const get = (headers: Record<string, string> = {}, method = "GET") =>
      storage.response("doc.txt", new Request("http://localhost/doc.txt", { method, headers }));
    const whole = await get();
    assert.equal(whole.status, 200);
    // An upload's own media type may be text/html: served, it runs no script on the app's origin.
    assert.equal(whole.headers.get("content-security-policy"), "sandbox");
    assert.equal(whole.headers.get("etag"), info.etag);
    assert.equal(whole.headers.get("content-length"), "10");
    assert.equal(await whole.text(), "0123456789");
    const part = await get({ range: "bytes=-3" });
    assert.deepEqual([part.status, part.headers.get("content-range"), await part.text()], [
      206,
      "bytes 7-9/10",
      "789",
    ]);
    assert.equal((await get({ "if-none-match": info.etag })).status, 304);
    assert.equal((await get({ range: "bytes=10-" })).status, 416);
    const head = await get({}, "HEAD");
    assert.deepEqual([head.status, await head.text()], [200, ""]);
    assert.equal((await storage.response("missing", new Request("http://localhost/"))).status, 404);
    // What a handler's HttpRequest binder gives: the request it holds is answered.
    const held = {
      getRaw: () => new Request("http://localhost/", { headers: { range: "bytes=0-0" } }),
    };
    const first = await storage.response("doc.txt", held);
    assert.deepEqual([first.status, await first.text()], [206, "0"]);
    driver.calls.length = 0;
    assert.equal((await storage.response("../x", new Request("http://localhost/"))).status, 404);
    assert.deepEqual(driver.calls, []);
  });

  it("cancels a stream it was given when the write is refused before reading it", async () => {
    const [storage] = storageOf();
    for (
      const attempt of [
        (body: ReadableStream<Uint8Array>) => storage.put("../x", body),
        (body: ReadableStream<Uint8Array>) => storage.put("a", body, { metadata: { "a b": "c" } }),
      ]
    ) {
      let cancelled: unknown;
      const body = new ReadableStream<Uint8Array>({
        cancel: (reason) => void (cancelled = reason),
      });
      const error = await attempt(body).catch((error) => error);
      assert.ok(error instanceof StorageError);
      assert.equal(cancelled, error);
    }
  });

  it("refuses a listing whose keys do not go forward, whatever its tokens", async () => {
    const [storage, driver] = storageOf();
    driver.store("k/1", new Uint8Array(1));
    let n = 0;
    // New tokens each time, the same page: a store that would list forever.
    driver.list = () =>
      Promise.resolve({
        objects: [{ key: "k/1", size: 1, etag: '"e"', lastModified: new Date(0) }],
        next: `t${++n}`,
      });
    const listing = async () => {
      for await (const _ of storage.list("k/")) { /* read to the end */ }
    };
    await assert.rejects(listing(), { kind: "invalid", message: /listed "k\/1" after "k\/1"/ });
    // A key outside the prefix: refused too.
    driver.list = () =>
      Promise.resolve({
        objects: [{ key: "other", size: 1, etag: '"e"', lastModified: new Date(0) }],
      });
    await assert.rejects(listing(), {
      kind: "invalid",
      message: /listed "other", which does not start with "k\/"/,
    });
    // An empty page that says there is more is read past.
    let pages = 0;
    driver.list = (_prefix, _limit, start) =>
      Promise.resolve(
        ++pages === 1
          ? { objects: [], next: "t" }
          : { objects: [{ key: `k/${start}`, size: 1, etag: '"e"', lastModified: new Date(0) }] },
      );
    const keys: string[] = [];
    for await (const object of storage.list("k/")) keys.push(object.key);
    assert.deepEqual(keys, ["k/t"]);
  });

  it("reads again an object written shorter between its head and its ranged body", async () => {
    const [storage, driver] = storageOf();
    driver.store("doc", new TextEncoder().encode("0123456789"));
    let writes = 1;
    driver.beforeGet = (key) => {
      if (writes-- > 0) driver.store(key, new TextEncoder().encode("01"));
    };
    const answer = await storage.response(
      "doc",
      new Request("http://localhost/", { headers: { range: "bytes=5-" } }),
    );
    assert.deepEqual([answer.status, answer.headers.get("content-range")], [416, "bytes */2"]);
  });

  it("reads again an object written between its head and its body, then gives up with 503", async () => {
    const [storage, driver] = storageOf();
    driver.store("doc", new TextEncoder().encode("first"));
    let writes = 1;
    driver.beforeGet = (key) => {
      if (writes-- > 0) driver.store(key, new TextEncoder().encode("second"));
    };
    const answer = await storage.response("doc", new Request("http://localhost/"));
    assert.deepEqual([answer.status, await answer.text()], [200, "second"]);
    driver.beforeGet = (key) => driver.store(key, new TextEncoder().encode("again"));
    const busy = await storage.response("doc", new Request("http://localhost/"));
    assert.deepEqual([busy.status, busy.headers.get("retry-after")], [503, "1"]);
  });
});
