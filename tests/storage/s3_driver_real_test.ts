// The S3 driver against a real S3 API server, S3Proxy on 127.0.0.1:9310 (tools/s3proxy.sh), which
// checks every signature as S3 does: objects of 0 B to 20 MiB, ranges, conditional writes,
// listings of 2,050 keys, copies, presigned URLs used by plain fetch, metadata past ASCII, and keys
// of every printable character. The bucket is this run's own; with no server the tests fail.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { S3Driver, type S3Settings } from "../../src/storage/s3_driver.ts";
import { compareKeys } from "../../src/storage/storage_key.ts";
import { putOf, readAll, rejectsWith } from "./fault_server.ts";
import { bucketName, dropBucket, makeBucket, s3Settings } from "./s3_server.ts";

const MiB = 1024 * 1024;

const bucket = bucketName("s3");
const encoder = new TextEncoder();
const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex");

function driver(settings: Partial<S3Settings> = {}): S3Driver {
  return new S3Driver(s3Settings(bucket, settings));
}

function bytesOf(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed + (i >>> 11)) % 251;
  return bytes;
}

// `bytes` as a stream of 64 KiB chunks, pulled as it is read.
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 64 * 1024));
      at += 64 * 1024;
    },
  }, { highWaterMark: 0 });
}

describe("S3Driver on S3Proxy", () => {
  const s3 = driver();
  let made: unknown = new Error("the bucket was not made");
  before(async () => {
    made = await makeBucket(bucket).then(() => true, (error: unknown) => error);
    if (made !== true) throw made;
  });
  // Bun runs the tests of a suite whose set-up failed: each fails at once, saying why.
  const test = (name: string, body: () => Promise<void>) =>
    it(name, () => {
      if (made !== true) throw made;
      return body();
    });
  after(async () => {
    if (made === true) await dropBucket(bucket);
  });

  test("finds the bucket, and says unavailable for a missing one", async () => {
    await s3.check();
    await rejectsWith(driver({ bucket: `${bucket}-none` }).check(), "unavailable", /no bucket/);
    await rejectsWith(
      driver({ bucket: `${bucket}-none` }).get("k"),
      "unavailable",
      /NoSuchBucket/,
    );
  });

  test("writes and reads back 0 B, 1 B and 5 MiB + 1, from bytes and from sized streams", async () => {
    for (const [key, size] of [["zero", 0], ["one", 1], ["five", 5 * MiB + 1]] as const) {
      const bytes = bytesOf(size);
      for (const body of [bytes, streamOf(bytes)]) {
        const info = await s3.put(putOf(key, body, { size, contentType: "application/x-test" }));
        assert.equal(info.size, size);
        assert.equal(info.etag, `"${md5(bytes)}"`);
        const read = await s3.get(key);
        assert.ok(read !== null);
        assert.equal(read.size, size);
        assert.equal(read.etag, info.etag);
        assert.equal(read.contentType, "application/x-test");
        assert.equal(md5(await readAll(read.body)), md5(bytes));
      }
    }
  });

  test("uploads a 20 MiB stream of unknown size in parts", async () => {
    const bytes = bytesOf(20 * MiB, 7);
    const info = await s3.put(putOf("twenty", streamOf(bytes), { contentType: "video/mp4" }));
    assert.equal(info.size, bytes.length);
    assert.match(info.etag, /^"[0-9a-f]{32}-3"$/);
    const head = await s3.head("twenty");
    assert.equal(head?.size, bytes.length);
    assert.equal(head?.etag, info.etag);
    assert.equal(head?.contentType, "video/mp4");
    const read = await s3.get("twenty");
    assert.equal(md5(await readAll(read!.body)), md5(bytes));
  });

  test("reads ranges, and says range past the end", async () => {
    const bytes = bytesOf(5 * MiB + 1);
    await s3.put(putOf("five", bytes));
    const middle = await s3.get("five", { offset: 5 * MiB - 2, length: 10 });
    assert.deepEqual(middle!.range, { offset: 5 * MiB - 2, length: 3 });
    assert.equal(middle!.size, 5 * MiB + 1);
    assert.deepEqual(await readAll(middle!.body), bytes.subarray(5 * MiB - 2));
    const open = await s3.get("five", { offset: 1 });
    assert.deepEqual(open!.range, { offset: 1, length: 5 * MiB });
    await open!.body.cancel();
    await rejectsWith(s3.get("five", { offset: 5 * MiB + 1 }), "range", /past the end/);
    await s3.put(putOf("empty", new Uint8Array(0)));
    const empty = await s3.get("empty", { offset: 0 });
    assert.equal(empty?.size, 0);
    assert.equal((await readAll(empty!.body)).length, 0);
    assert.equal(await s3.get("no such key", { offset: 0 }), null);
  });

  test("refuses to replace an object with ifNoneMatch, small or in parts", async () => {
    await s3.put(putOf("taken", encoder.encode("first"), { ifNoneMatch: true }));
    await rejectsWith(
      s3.put(putOf("taken", encoder.encode("second"), { ifNoneMatch: true })),
      "exists",
      /PutObject: an object has the key/,
    );
    await rejectsWith(
      s3.put(putOf("taken", streamOf(bytesOf(9 * MiB)), { ifNoneMatch: true })),
      "exists",
      /an object has the key/,
    );
    const read = await s3.get("taken");
    assert.equal(new TextDecoder().decode(await readAll(read!.body)), "first");
  });

  test("lists 2,050 keys a page at a time, in order, the prefix taken off", async () => {
    const paged = driver({ prefix: "tenant/" });
    const keys = Array.from({ length: 2050 }, (_, i) => `many/${String(i).padStart(4, "0")}`);
    for (let i = 0; i < keys.length; i += 25) {
      await Promise.all(
        keys.slice(i, i + 25).map((key) => paged.put(putOf(key, encoder.encode(key)))),
      );
    }
    const seen: string[] = [];
    const pages: number[] = [];
    let start: string | undefined;
    do {
      const page = await paged.list("many/", 1000, start);
      pages.push(page.objects.length);
      for (const object of page.objects) {
        seen.push(object.key);
        assert.equal(object.size, 9);
        assert.match(object.etag, /^"[0-9a-f]{32}"$/);
      }
      start = page.next;
    } while (start !== undefined);
    assert.deepEqual(seen, keys);
    assert.equal(pages.length, 3);
    assert.equal((await paged.list("many/20", 1000)).objects.length, 50);
  });

  test("copies an object with its metadata, and says false without one", async () => {
    const metadata = { author: "Zoë Ω 😀", plain: "ascii only", edge: " spaced =?x?= " };
    await s3.put(
      putOf("original", encoder.encode("copy me"), { metadata, contentType: "text/csv" }),
    );
    assert.equal(await s3.copy("original", "copied/one"), true);
    const copy = await s3.get("copied/one");
    assert.deepEqual(copy?.metadata, metadata);
    assert.equal(new TextDecoder().decode(await readAll(copy!.body)), "copy me");
    assert.equal(await s3.copy("no such key", "copied/two"), false);
    assert.equal(await s3.head("copied/two"), null);
    assert.equal(await s3.copy("twenty", "copied-twenty"), true);
    assert.equal((await s3.head("copied-twenty"))?.size, 20 * MiB);
  });

  test("keeps metadata past ASCII, and a text/ type as S3Proxy gives it back", async () => {
    const metadata = { title: "Ünïcödé — 日本語", note: "=?UTF-8?B?not-a-word?=" };
    const written = await s3.put(
      putOf("meta", encoder.encode("m"), { metadata, contentType: "text/plain" }),
    );
    assert.deepEqual(written.metadata, metadata);
    const head = await s3.head("meta");
    assert.deepEqual(head?.metadata, metadata);
    // S3 answers the type as it was written; S3Proxy (Jetty) adds a charset to text/ types.
    assert.match(head!.contentType, /^text\/plain(;charset=utf-8)?$/i);
  });

  test("writes, reads, lists and deletes keys of every printable character and past ASCII", async () => {
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
      .filter((c) => c !== "/").join("");
    const keys = [
      `chars/${printable}`,
      "chars/ü é/中文/😀",
      "chars/+plus+ and %20 and %2F",
      "chars/a.b~c_d-e",
      "chars/\u00a0nbsp\ufeff",
    ];
    for (const key of keys) await s3.put(putOf(key, encoder.encode(key)));
    for (const key of keys) {
      const read = await s3.get(key);
      assert.equal(new TextDecoder().decode(await readAll(read!.body)), key);
      // The copy source is URL-encoded as the path is.
      assert.equal(await s3.copy(key, `${key}.copy`), true);
      assert.equal((await s3.head(`${key}.copy`))?.size, encoder.encode(key).length);
      await s3.delete(`${key}.copy`);
    }
    const listed = (await s3.list("chars/", 1000)).objects.map((object) => object.key);
    assert.deepEqual(listed, [...keys].sort(compareKeys));
    for (const key of keys) await s3.delete(key);
    assert.deepEqual((await s3.list("chars/", 1000)).objects, []);
  });

  test("signs URLs that plain fetch can GET and PUT with", async () => {
    const bytes = bytesOf(1000, 3);
    const putUrl = await s3.signedUrl("signed/file.bin", "PUT", 300);
    const put = await fetch(putUrl, { method: "PUT", body: bytes });
    assert.equal(put.status, 200, await put.text());
    const getUrl = await s3.signedUrl("signed/file.bin", "GET", 300);
    const got = await fetch(getUrl);
    assert.equal(got.status, 200);
    assert.deepEqual(new Uint8Array(await got.arrayBuffer()), bytes);
    const tampered = new URL(getUrl);
    tampered.searchParams.set("X-Amz-Expires", "301");
    const refused = await fetch(tampered);
    await refused.body?.cancel();
    assert.equal(refused.status, 403);
  });

  test("deletes, and a missing key is no error", async () => {
    await s3.put(putOf("gone", encoder.encode("x")));
    await s3.delete("gone");
    assert.equal(await s3.head("gone"), null);
    assert.equal(await s3.get("gone"), null);
    await s3.delete("gone");
  });

  test("says denied with a wrong secret, and shows it nowhere", async () => {
    const wrong = driver({ secretAccessKey: "not-the-secret-at-all" });
    const fault = await rejectsWith(wrong.get("one"), "denied", /S3 answered 403/);
    assert.ok(!fault.message.includes("not-the-secret-at-all"));
  });
});
