// The one behaviour every store promises, run on each: round trips of 0 B to 100 MiB, ranges,
// conditional requests, a listing of 2,000 keys page by page, hostile keys, and concurrent writes
// of one key. A store's own faults (a server that dies mid-upload) are its test file's.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import fc from "fast-check";
import type { ObjectStorage } from "../../src/storage/object_storage.ts";
import { StorageError } from "../../src/storage/storage_error.ts";
import { compareKeys } from "../../src/storage/storage_key.ts";
import { propertyOptions } from "../property.ts";

const MiB = 1024 * 1024;

/** `size` bytes made of `seed`, the same each time they are made, in chunks of `chunk` bytes. */
export function patternStream(
  size: number,
  seed = 1,
  chunk = 64 * 1024 + 7,
): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= size) return controller.close();
      const length = Math.min(chunk, size - at);
      const bytes = new Uint8Array(length);
      for (let i = 0; i < length; i++) bytes[i] = ((at + i) * 31 + seed + ((at + i) >>> 13)) & 0xff;
      at += length;
      controller.enqueue(bytes);
    },
  }, { highWaterMark: 0 });
}

/** The SHA-256 of a stream, read as it comes. */
export async function digestOf(
  stream: ReadableStream<Uint8Array>,
): Promise<{ hex: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { hex: hash.digest("hex"), size };
}

/** The suite, on the store `storage()` gives once its `before` has run. */
export function conformance(kind: string, storage: () => ObjectStorage): void {
  describe(`the ${kind} store`, () => {
    for (const size of [0, 1, 5 * MiB + 1, 100 * MiB]) {
      it(`round trips ${size} bytes streamed, as they were`, async () => {
        const key = `round/${size}.bin`;
        const stored = await storage().put(key, patternStream(size, size), {
          metadata: { size: `${size}` },
        });
        assert.equal(stored.size, size);
        const found = await storage().get(key);
        assert.ok(found !== null);
        assert.deepEqual([found.size, found.etag, found.metadata], [size, stored.etag, {
          size: `${size}`,
        }]);
        assert.deepEqual(await digestOf(found.body), await digestOf(patternStream(size, size)));
        await storage().delete(key);
        assert.equal(await storage().head(key), null);
      });
    }

    it("round trips bytes, text and blobs, with their media types", async () => {
      const s = storage();
      await s.put("kinds/bytes", new Uint8Array([0, 255, 10]));
      // No parameter: S3Proxy's server (Jetty) rewrites `; charset=UTF-8` as it takes it.
      await s.put("kinds/text", "héllo", { contentType: "text/markdown" });
      // Its type as the runtime keeps it: Bun adds `;charset=utf-8` to a JSON blob's.
      const blob = new Blob(["{}"], { type: "application/json" });
      await s.put("kinds/blob", blob);
      const bytes = await s.get("kinds/bytes");
      assert.deepEqual(
        new Uint8Array(await new Response(bytes?.body).arrayBuffer()),
        new Uint8Array([0, 255, 10]),
      );
      assert.equal(bytes?.contentType, "application/octet-stream");
      const text = await s.get("kinds/text");
      assert.deepEqual([await new Response(text?.body).text(), text?.contentType], [
        "héllo",
        "text/markdown",
      ]);
      assert.equal((await s.head("kinds/blob"))?.contentType, blob.type);
    });

    it("reads ranges as the bytes' slices", async () => {
      const s = storage();
      const size = 5 * MiB + 1;
      const whole = new Uint8Array(await new Response(patternStream(size, 7)).arrayBuffer());
      await s.put("ranges/object", whole);
      const slice = async (offset: number, length?: number) => {
        const found = await s.get("ranges/object", {
          range: length === undefined ? { offset } : { offset, length },
        });
        assert.ok(found !== null);
        const bytes = new Uint8Array(await new Response(found.body).arrayBuffer());
        const end = Math.min(size, offset + (length ?? size));
        assert.deepEqual(found.range, { offset, length: end - offset });
        assert.equal(found.size, size);
        assert.ok(
          Buffer.from(bytes).equals(Buffer.from(whole.subarray(offset, end))),
          `${offset}+${length}`,
        );
      };
      await slice(0, 1);
      await slice(size - 1);
      await slice(5 * MiB - 3, 10);
      await slice(12345, size);
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: size - 1 }),
          fc.option(fc.integer({ min: 1, max: 70_000 })),
          (offset, length) => slice(offset, length ?? undefined),
        ),
        propertyOptions(15),
      );
      await assert.rejects(s.get("ranges/object", { range: { offset: size } }), {
        name: "StorageError",
        kind: "range",
      });
      assert.equal(await s.get("ranges/missing", { range: { offset: 0 } }), null);
    });

    it("answers conditional and range requests", async () => {
      const s = storage();
      const stored = await s.put("http/page.txt", "0123456789", { contentType: "text/plain" });
      const answer = (headers: Record<string, string> = {}) =>
        s.response("http/page.txt", new Request("http://localhost/", { headers }));
      const ok = await answer();
      assert.deepEqual([ok.status, ok.headers.get("etag"), await ok.text()], [
        200,
        stored.etag,
        "0123456789",
      ]);
      assert.ok(ok.headers.get("last-modified"));
      const modified = ok.headers.get("last-modified") as string;
      assert.equal((await answer({ "if-none-match": stored.etag })).status, 304);
      assert.equal((await answer({ "if-modified-since": modified })).status, 304);
      assert.equal((await answer({ "if-match": '"other"' })).status, 412);
      const part = await answer({ range: "bytes=3-5" });
      assert.deepEqual([part.status, part.headers.get("content-range"), await part.text()], [
        206,
        "bytes 3-5/10",
        "345",
      ]);
      assert.equal((await answer({ range: "bytes=10-" })).status, 416);
      const stale = await answer({ range: "bytes=3-5", "if-range": '"stale"' });
      assert.deepEqual([stale.status, await stale.text()], [200, "0123456789"]);
      assert.equal((await s.response("http/none", new Request("http://localhost/"))).status, 404);
    });

    it("lists 2,000 keys page by page, in the order of their bytes, and to a limit", async () => {
      const s = storage();
      // ASCII, two bytes and four: one order in UTF-8 and UTF-16 alike. S3Proxy, a Java server,
      // lists by UTF-16 unit (U+E000 to U+FFFF after the astral characters); S3 and the disk by
      // UTF-8 byte, which compareKeys' tests and the file store's hold to.
      const keys = Array.from(
        { length: 2000 },
        (_, i) => `list/${i % 3 === 0 ? "é" : i % 3 === 1 ? "\u{1F600}" : "a"}${i}`,
      );
      for (let i = 0; i < keys.length; i += 25) {
        await Promise.all(keys.slice(i, i + 25).map((key) => s.put(key, key)));
      }
      await s.put("listed-not", "x");
      const listed: string[] = [];
      for await (const object of s.list("list/")) {
        assert.equal(object.size, new TextEncoder().encode(object.key).length);
        listed.push(object.key);
      }
      assert.deepEqual(listed, [...keys].sort(compareKeys));
      const limited: string[] = [];
      for await (const object of s.list("list/", { limit: 1001 })) limited.push(object.key);
      assert.deepEqual(limited, listed.slice(0, 1001));
      const none: string[] = [];
      for await (const object of s.list("list/nothing-here")) none.push(object.key);
      assert.deepEqual(none, []);
    });

    it("refuses hostile keys before any I/O, and round trips every character a key may hold", async () => {
      const s = storage();
      const hostile = [
        "",
        "../escape",
        "a/../../b",
        "/abs",
        "a//b",
        "a/",
        "a\u0000b",
        "a\r\nX-Evil: 1",
        "\ud800",
        "x".repeat(256),
      ];
      for (const key of hostile) {
        await assert.rejects(s.put(key, "x"), (error: unknown) => {
          assert.ok(error instanceof StorageError && error.kind === "key", String(error));
          // deno-lint-ignore no-control-regex -- the characters no message may hold
          assert.doesNotMatch(error.message, /[\u0000-\u001f]/);
          return true;
        });
        await assert.rejects(s.get(key), { name: "StorageError", kind: "key" });
      }
      let printable = "";
      for (let code = 0x20; code < 0x7f; code++) {
        if (code !== 0x2f && code !== 0x5c) printable += String.fromCharCode(code);
      }
      const keys = [
        `chars/${printable}`,
        "chars/naïve \u{1F600} ü",
        "chars/%2e%2e/%2F",
        "chars/a+b=c&d?e#f",
        "chars/.hidden",
        "chars/...",
      ];
      for (const key of keys) {
        await s.put(key, key);
        assert.equal(await new Response((await s.get(key))?.body).text(), key, key);
      }
      const listed: string[] = [];
      for await (const object of s.list("chars/")) listed.push(object.key);
      assert.deepEqual(listed, [...keys].sort(compareKeys));
    });

    it("ends concurrent writes of one key with one of them whole, never a mix", async () => {
      const s = storage();
      const writers = 6;
      const size = 6 * MiB + 3;
      const results = await Promise.allSettled(
        Array.from(
          { length: writers },
          (_, i) =>
            s.put("race/one", patternStream(size, i + 1), { metadata: { writer: `${i + 1}` } }),
        ),
      );
      assert.ok(results.some((result) => result.status === "fulfilled"), JSON.stringify(results));
      const found = await s.get("race/one");
      assert.ok(found !== null);
      const writer = Number(found.metadata.writer);
      assert.ok(writer >= 1 && writer <= writers);
      assert.deepEqual(await digestOf(found.body), await digestOf(patternStream(size, writer)));
    });

    it("writes once with ifNoneMatch, and copies and deletes", async () => {
      const s = storage();
      await s.put("once/a", "first", { ifNoneMatch: true });
      await assert.rejects(s.put("once/a", "second", { ifNoneMatch: true }), {
        name: "StorageError",
        kind: "exists",
      });
      assert.equal(await new Response((await s.get("once/a"))?.body).text(), "first");
      assert.equal(await s.copy("once/a", "once/b"), true);
      assert.equal(await s.copy("once/missing", "once/c"), false);
      assert.equal(await new Response((await s.get("once/b"))?.body).text(), "first");
      await s.delete("once/a");
      await s.delete("once/a");
      assert.equal(await s.head("once/a"), null);
    });

    it("leaves no object when the body's stream fails midway", async () => {
      const s = storage();
      for (const size of [MiB, 20 * MiB]) {
        const source = patternStream(size, 3).getReader();
        let sent = 0;
        const failing = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (sent > size / 2) return controller.error(new Error("the client went away"));
            const { value, done } = await source.read();
            if (done) return controller.close();
            sent += value.length;
            controller.enqueue(value);
          },
        }, { highWaterMark: 0 });
        const error = await s.put(`broken/${size}`, failing).catch((error) => error);
        assert.ok(error instanceof StorageError, String(error));
        assert.equal(error.kind, "aborted", error.message);
        assert.equal(await s.head(`broken/${size}`), null);
      }
    });
  });
}
