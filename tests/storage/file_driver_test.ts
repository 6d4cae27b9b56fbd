// The file store: objects as files written whole, metadata that stays with its own bytes whatever
// runs at once, listings in UTF-8 byte order, and no key that reaches outside the folder.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { appendFile, lstat, mkdir, readdir, readFile, rename } from "node:fs/promises";
import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { FileDriver } from "../../src/storage/file_driver.ts";
import type { DriverPut, StorageFaultKind } from "../../src/storage/storage_driver.ts";
import { StorageFault } from "../../src/storage/storage_driver.ts";
import { compareKeys } from "../../src/storage/storage_key.ts";
import { deferred } from "../deferred.ts";
import { propertyOptions } from "../property.ts";
import { tempDir } from "../temp_dir.ts";

const MiB = 1024 * 1024;

// Bytes that differ from one `seed` to the next, the same on every run.
function bytes(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const sha = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
const etagOf = (data: Uint8Array) => `"${sha(data).slice(0, 32)}"`;

// `data` as a stream that gives chunks of the `sizes` in turn, each only when it is read, and
// ends once `ending` (when given) resolves.
function streamOf(
  data: Uint8Array,
  sizes: readonly number[] = [4099],
  ending?: () => Promise<void>,
): ReadableStream<Uint8Array> {
  let at = 0;
  let turn = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= data.length) {
        await ending?.();
        return controller.close();
      }
      const size = sizes[turn++ % sizes.length];
      controller.enqueue(data.slice(at, at + size));
      at += size;
    },
  }, { highWaterMark: 0 });
}

// What each of `count` streams waits on before its end, so that their puts all end at once: the
// commits that follow race as closely as the event loop lets them.
function barrier(count: number): () => Promise<void> {
  const all = deferred();
  let arrived = 0;
  return () => {
    if (++arrived === count) all.resolve();
    return all.promise;
  };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function sameBytes(actual: Uint8Array, expected: Uint8Array, what = "the bytes"): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  assert.equal(sha(actual), sha(expected), `${what}: content`);
}

function putOf(key: string, body: DriverPut["body"], more: Partial<DriverPut> = {}): DriverPut {
  return { key, body, contentType: "text/plain", metadata: {}, ifNoneMatch: false, ...more };
}

async function rejectsWith(work: Promise<unknown>, kind: StorageFaultKind, message?: RegExp) {
  await assert.rejects(work, (error) => {
    assert.ok(error instanceof StorageFault, `a StorageFault, got ${error}`);
    assert.equal(error.kind, kind, error.message);
    if (message !== undefined) assert.match(error.message, message);
    return true;
  });
}

// Every file under `folder`, hidden ones too, as paths from it.
async function filesUnder(folder: string, under = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(folder, under), { withFileTypes: true })) {
    const path = under === "" ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) found.push(...await filesUnder(folder, path));
    else found.push(path);
  }
  return found.sort();
}

const temps = (files: readonly string[]) => files.filter((file) => file.includes(".thaw-tmp-"));
const sidecarsOf = (files: readonly string[], key: string) =>
  files.filter((file) => file.startsWith(`.thaw-storage/meta/${sha(key)}/`));

async function store(prefix: string) {
  const dir = await tempDir(`thaw-file-${prefix}-`);
  const root = join(dir.path, "store");
  return { dir, root, driver: new FileDriver(root) };
}

async function listAll(driver: FileDriver, prefix: string, limit = 1000): Promise<string[]> {
  const keys: string[] = [];
  let start: string | undefined;
  do {
    const page = await driver.list(prefix, limit, start);
    keys.push(...page.objects.map((object) => object.key));
    // A page that does not move on would list forever.
    assert.notEqual(page.next, start ?? "", `the listing stands still at ${start}`);
    start = page.next;
  } while (start !== undefined);
  return keys;
}

describe("FileDriver: put and get", () => {
  it("round trips 0 B, 1 B and 5 MiB + 1 streamed in odd chunks, each a file at <folder>/<key>", async () => {
    const { dir, root, driver } = await store("trip");
    await using _ = dir;
    const cases = [
      { key: "empty", data: bytes(0), body: (d: Uint8Array) => d },
      { key: "one/byte", data: bytes(1), body: (d: Uint8Array) => streamOf(d) },
      {
        key: "big/x.bin",
        data: bytes(5 * MiB + 1),
        body: (d: Uint8Array) => streamOf(d, [7919, 1, 65537, 3]),
      },
    ];
    for (const { key, data, body } of cases) {
      const metadata = { owner: `o-${key}` };
      const put = await driver.put(putOf(key, body(data), { metadata, contentType: "image/png" }));
      assert.equal(put.size, data.length);
      assert.equal(put.etag, etagOf(data));
      const got = await driver.get(key);
      assert.ok(got !== null);
      sameBytes(await readAll(got.body), data, key);
      assert.equal(got.range, undefined);
      const { body: _body, ...info } = got;
      assert.deepEqual(info, put);
      assert.deepEqual(await driver.head(key), put);
      assert.deepEqual(info, {
        key,
        size: data.length,
        contentType: "image/png",
        etag: etagOf(data),
        lastModified: put.lastModified,
        metadata,
      });
      sameBytes(await readFile(join(root, ...key.split("/"))), data, `${key} on the disk`);
    }
    assert.deepEqual(temps(await filesUnder(root)), []);
  });

  it("gives a range as slicing the bytes in memory does, and refuses one past the end", async () => {
    const { dir, driver } = await store("range");
    await using _ = dir;
    const objects = [1, 1000, 2 * 64 * 1024 + 5].map((size, i) => ({
      key: `r${i}`,
      data: bytes(size, i + 7),
    }));
    for (const { key, data } of objects) await driver.put(putOf(key, streamOf(data, [4099])));
    const asked = fc.integer({ min: 0, max: objects.length - 1 }).chain((i) => {
      const size = objects[i].data.length;
      const near = fc.constantFrom(0, 1, size - 1, size, 65535, 65536, 65537);
      return fc.record({
        i: fc.constant(i),
        offset: fc.oneof(fc.integer({ min: 0, max: size + 10 }), near),
        length: fc.option(
          fc.oneof(fc.integer({ min: 1, max: size + 10 }), near.filter((n) => n > 0)),
          { nil: undefined },
        ),
      });
    });
    await fc.assert(
      fc.asyncProperty(asked, async ({ i, offset, length }) => {
        const { key, data } = objects[i];
        if (offset >= data.length) {
          await rejectsWith(driver.get(key, { offset, length }), "range", /past the object's/);
          return;
        }
        const got = await driver.get(key, { offset, length });
        assert.ok(got !== null);
        const end = length === undefined ? data.length : Math.min(data.length, offset + length);
        assert.deepEqual(got.range, { offset, length: end - offset });
        assert.equal(got.size, data.length);
        sameBytes(await readAll(got.body), data.subarray(offset, end));
      }),
      propertyOptions(60),
    );
  });

  it("gives an empty object whole for any range, with no range", async () => {
    const { dir, driver } = await store("empty-range");
    await using _ = dir;
    await driver.put(putOf("e", new Uint8Array(0)));
    const got = await driver.get("e", { offset: 5, length: 2 });
    assert.ok(got !== null);
    assert.equal(got.range, undefined);
    assert.equal((await readAll(got.body)).length, 0);
  });

  it("gives a file dropped in by hand, or changed in place, the defaults and an etag of its stat", async () => {
    const { dir, root, driver } = await store("hand");
    await using _ = dir;
    await mkdir(join(root, "docs"), { recursive: true });
    await writeFile(join(root, "docs", "hand.txt"), "by hand");
    const hand = await driver.head("docs/hand.txt");
    assert.ok(hand !== null);
    assert.deepEqual([hand.contentType, hand.metadata, hand.size], [
      "application/octet-stream",
      {},
      7,
    ]);
    assert.match(hand.etag, /^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
    const put = await driver.put(putOf("k", bytes(10), { metadata: { a: "1" } }));
    await appendFile(join(root, "k"), "more");
    const changed = await driver.head("k");
    assert.ok(changed !== null);
    assert.deepEqual([changed.contentType, changed.metadata, changed.size], [
      "application/octet-stream",
      {},
      14,
    ]);
    assert.notEqual(changed.etag, put.etag);
  });

  it("streams the bytes it opened, whatever is put over the key or deleted after the get", async () => {
    const { dir, driver } = await store("open");
    await using _ = dir;
    const old = bytes(300 * 1024, 1);
    const next = bytes(200 * 1024, 2);
    await driver.put(putOf("k", old));
    const got = await driver.get("k");
    assert.ok(got !== null);
    const reader = got.body.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    await driver.put(putOf("k", streamOf(next), { metadata: { v: "2" } }));
    const chunks = [first.value];
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks.push(read.value);
    }
    sameBytes(Buffer.concat(chunks), old, "the bytes opened");
    const again = await driver.get("k");
    assert.ok(again !== null);
    assert.deepEqual(again.metadata, { v: "2" });
    await driver.delete("k");
    sameBytes(await readAll(again.body), next, "the bytes opened before the delete");
    assert.equal(await driver.get("k"), null);
  });
});

describe("FileDriver: puts at once", () => {
  it("ifNoneMatch writes only where no object is, and leaves the object there as it was", async () => {
    const { dir, driver } = await store("inm");
    await using _ = dir;
    await driver.put(putOf("k", bytes(5, 1), { ifNoneMatch: true, metadata: { v: "1" } }));
    // Refused before the body is read, however long it is; and the body is cancelled.
    let pulls = 0;
    const cancelled = deferred<unknown>();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(bytes(5, pulls++));
        controller.close();
      },
      cancel: (why) => cancelled.resolve(why),
    }, { highWaterMark: 0 });
    await rejectsWith(driver.put(putOf("k", body, { ifNoneMatch: true })), "exists", /"k"/);
    assert.equal(pulls, 0);
    assert.ok((await cancelled.promise) instanceof StorageFault);
    const got = await driver.get("k");
    assert.ok(got !== null);
    sameBytes(await readAll(got.body), bytes(5, 1));
    assert.deepEqual(got.metadata, { v: "1" });
  });

  it("of concurrent ifNoneMatch puts of one key, exactly one succeeds, and its object is there", async () => {
    const { dir, root, driver } = await store("inm-race");
    await using _ = dir;
    // Rounds, each of ten puts whose bodies end at once: a check apart from the write loses some.
    for (const key of ["k1", "k2", "k3", "k4"]) {
      const bodies = Array.from({ length: 10 }, (_, i) => bytes(50_000 + i, i + 1));
      const together = barrier(bodies.length);
      const results = await Promise.allSettled(
        bodies.map((body, i) =>
          driver.put(putOf(key, streamOf(body, [3001], together), {
            ifNoneMatch: true,
            metadata: { n: `${i}` },
          }))
        ),
      );
      const won = results.flatMap((result, i) => result.status === "fulfilled" ? [i] : []);
      assert.equal(won.length, 1, `${key}: winners ${won}`);
      for (const result of results) {
        if (result.status === "fulfilled") continue;
        const { reason } = result;
        assert.ok(reason instanceof StorageFault && reason.kind === "exists", `${reason}`);
      }
      const got = await driver.get(key);
      assert.ok(got !== null);
      assert.deepEqual(got.metadata, { n: `${won[0]}` });
      sameBytes(await readAll(got.body), bodies[won[0]]);
      const files = await filesUnder(root);
      assert.deepEqual(temps(files), []);
      assert.equal(sidecarsOf(files, key).length, 1, files.join("\n"));
    }
  });

  it("20 concurrent puts of one key end with one of them whole, with its own metadata", async () => {
    const { dir, root, driver } = await store("race");
    await using _ = dir;
    const bodies = Array.from({ length: 20 }, (_, i) => bytes(100_000 + 37 * i, i + 1));
    const together = barrier(bodies.length);
    const puts = await Promise.all(
      bodies.map((body, i) =>
        driver.put(putOf("same/key", streamOf(body, [4093 + i], together), {
          contentType: `text/x-${i}`,
          metadata: { n: `${i}` },
        }))
      ),
    );
    const got = await driver.get("same/key");
    assert.ok(got !== null);
    const n = Number(got.metadata.n);
    assert.ok(n >= 0 && n < 20, `metadata ${JSON.stringify(got.metadata)}`);
    sameBytes(await readAll(got.body), bodies[n], `put ${n}'s bytes`);
    assert.equal(got.contentType, `text/x-${n}`);
    assert.equal(got.etag, puts[n].etag);
    const files = await filesUnder(root);
    assert.deepEqual(temps(files), []);
    assert.equal(sidecarsOf(files, "same/key").length, 1, files.join("\n"));
  });
  it("keeps the sidecar of a put between its sidecar and its rename while another put prunes", async () => {
    // No timing holds a put between its two steps: the state it leaves there is made by hand,
    // from a real sidecar, and the other put prunes with it in place.
    const { dir, root, driver } = await store("pending");
    await using _ = dir;
    await driver.put(putOf("k", bytes(3), { metadata: { v: "first" } }));
    const metaFolder = join(root, ".thaw-storage", "meta", sha("k"));
    const [first] = await readdir(metaFolder);
    const sidecar = JSON.parse(await readFile(join(metaFolder, first), "utf8"));
    const temp = `.thaw-tmp-${crypto.randomUUID()}`;
    await writeFile(join(root, temp), "pending");
    const stats = await lstat(join(root, temp), { bigint: true });
    const version = [stats.ino, stats.size, stats.mtimeMs].map((n) => n.toString(16)).join("-");
    const pending = { ...sidecar, metadata: { v: "pending" }, temp };
    await writeFile(join(metaFolder, `${version}.json`), JSON.stringify(pending));
    await driver.put(putOf("k", bytes(4), { metadata: { v: "second" } }));
    const kept = await readdir(metaFolder);
    assert.equal(kept.length, 2, `the second put's sidecar and the pending one: ${kept}`);
    assert.ok(!kept.includes(first));
    await rename(join(root, temp), join(root, "k"));
    assert.deepEqual((await driver.head("k"))?.metadata, { v: "pending" });
    await driver.delete("k");
    assert.deepEqual(await filesUnder(root), []);
  });
});

describe("FileDriver: failed puts leave nothing", () => {
  it("a body stream that fails midway: aborted, the old object kept, no temp file left", async () => {
    const { dir, root, driver } = await store("fail");
    await using _ = dir;
    await driver.put(putOf("old", bytes(10), { metadata: { v: "old" } }));
    const failing = () => {
      let pulls = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (++pulls > 3) controller.error(new Error("the network went away"));
          else controller.enqueue(bytes(70_000, pulls));
        },
      }, { highWaterMark: 0 });
    };
    for (const key of ["old", "new/key"]) {
      await rejectsWith(
        driver.put(putOf(key, failing())),
        "aborted",
        /the body's stream failed: the network went away/,
      );
    }
    assert.equal(await driver.head("new/key"), null);
    const old = await driver.get("old");
    assert.ok(old !== null);
    sameBytes(await readAll(old.body), bytes(10));
    assert.deepEqual(old.metadata, { v: "old" });
    const files = await filesUnder(root);
    assert.deepEqual(files.filter((file) => !file.startsWith(".thaw-storage/")), ["old"]);
    assert.deepEqual(temps(files), []);
    assert.deepEqual(sidecarsOf(files, "new/key"), []);
  });

  it("an abort midway: aborted, the stream cancelled with the signal's reason, nothing left", async () => {
    const { dir, root, driver } = await store("abort");
    await using _ = dir;
    const controller = new AbortController();
    const reason = new Error("the client left");
    const cancelled = deferred<unknown>();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        if (++pulls <= 2) return stream.enqueue(bytes(70_000, pulls));
        controller.abort(reason);
        // The source has nothing more to give: only the cancel ends the read.
        return new Promise<void>(() => {});
      },
      cancel: (why) => cancelled.resolve(why),
    }, { highWaterMark: 0 });
    await rejectsWith(
      driver.put(putOf("k", body, { signal: controller.signal })),
      "aborted",
      /signal/,
    );
    assert.equal(await cancelled.promise, reason);
    assert.equal(await driver.head("k"), null);
    assert.deepEqual(await filesUnder(root), []);
  });

  it("a folder made at the key while its body streams: invalid, no sidecar nor temp file left", async () => {
    const { dir, root, driver } = await store("late-folder");
    await using _ = dir;
    const reading = deferred();
    const release = deferred();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        reading.resolve();
        await release.promise;
        controller.enqueue(bytes(10));
        controller.close();
      },
    }, { highWaterMark: 0 });
    const writing = driver.put(putOf("d", body));
    await reading.promise;
    await driver.put(putOf("d/e", bytes(1)));
    release.resolve();
    await rejectsWith(writing, "invalid", /"d" is a folder of other keys/);
    const files = await filesUnder(root);
    assert.deepEqual(files.filter((file) => !file.startsWith(".thaw-storage/")), ["d/e"]);
    assert.deepEqual(sidecarsOf(files, "d"), []);
    assert.deepEqual(temps(files), []);
  });

  it("an already aborted signal: the body is cancelled, and not even the folder is made", async () => {
    const { dir, root, driver } = await store("aborted");
    await using _ = dir;
    const cancelled = deferred<unknown>();
    const body = new ReadableStream<Uint8Array>({ cancel: (why) => cancelled.resolve(why) });
    const signal = AbortSignal.abort("gone");
    await rejectsWith(driver.put(putOf("k", body, { signal })), "aborted");
    assert.ok((await cancelled.promise) instanceof StorageFault);
    await assert.rejects(lstat(root), { code: "ENOENT" });
  });
});

describe("FileDriver: keys on the disk", () => {
  it("refuses keys in the store's own folder, in any case or width, and temp file names", async () => {
    const { dir, driver } = await store("reserved");
    await using _ = dir;
    const refused = [
      ".thaw-storage/x",
      ".THAW-Storage/meta",
      "\uFF0Ethaw-storage/x",
      ".thaw-storage",
      ".thaw-storage./x",
      "a/.thaw-tmp-1",
    ];
    for (const key of refused) {
      await rejectsWith(driver.put(putOf(key, bytes(1))), "invalid", /file store's/);
      await rejectsWith(driver.get(key), "invalid");
      await rejectsWith(driver.head(key), "invalid");
      await rejectsWith(driver.delete(key), "invalid");
      await rejectsWith(driver.copy("x", key), "invalid");
    }
    for (const key of [".thaw-storagex/y", "x/.thaw-storage", ".thaw-tmp"]) {
      await driver.put(putOf(key, bytes(3)));
      assert.equal((await driver.head(key))?.size, 3, key);
    }
    assert.deepEqual(await listAll(driver, ""), [
      ".thaw-storagex/y",
      ".thaw-tmp",
      "x/.thaw-storage",
    ]);
    assert.deepEqual(await listAll(driver, ".thaw-storage/"), []);
  });

  it("refuses a key under an object, or one naming a folder, saying why", async () => {
    const { dir, driver } = await store("shape");
    await using _ = dir;
    await driver.put(putOf("a", bytes(1)));
    await rejectsWith(
      driver.put(putOf("a/b", streamOf(bytes(9)))),
      "invalid",
      /"a" is an object, not a folder/,
    );
    assert.equal(await driver.get("a/b"), null);
    assert.equal(await driver.head("a/b/c"), null);
    await driver.delete("a/b");
    await driver.put(putOf("d/e", bytes(1)));
    await rejectsWith(driver.put(putOf("d", bytes(2))), "invalid", /"d" is a folder of other keys/);
    await rejectsWith(driver.put(putOf("d", bytes(2), { ifNoneMatch: true })), "invalid", /folder/);
    assert.equal(await driver.get("d"), null);
    assert.equal(await driver.head("d"), null);
    assert.deepEqual(await listAll(driver, ""), ["a", "d/e"]);
  });

  it("round trips keys of every printable ASCII character, and non-ASCII ones", async () => {
    const { dir, root, driver } = await store("hostile");
    await using _ = dir;
    // But the separators, "/" and "\\" (Windows'), which no key holds.
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i))
      .filter((c) => c !== "/" && c !== "\\");
    const keys = [
      ...printable.map((c) => `k${c}`),
      printable.join(""),
      ' :*?"<>|',
      "...",
      "é",
      "e\u0301",
      "日本/語",
      "\u{1F600}",
      "\u{10000}",
      "\uE000",
      "trailing. ",
    ];
    for (const [i, key] of keys.entries()) {
      await driver.put(putOf(key, bytes(i + 1, i), { metadata: { i: `${i}` } }));
    }
    for (const [i, key] of keys.entries()) {
      const got = await driver.get(key);
      assert.ok(got !== null, key);
      assert.deepEqual(got.metadata, { i: `${i}` }, key);
      sameBytes(await readAll(got.body), bytes(i + 1, i), key);
    }
    assert.ok((await lstat(join(root, "k:"))).isFile());
    assert.deepEqual(await listAll(driver, "", 7), [...keys].sort(compareKeys));
  });

  it("refuses a segment longer than the file system's names as invalid, leaving nothing", async () => {
    const { dir, root, driver } = await store("long");
    await using _ = dir;
    await rejectsWith(
      driver.put(putOf("x".repeat(300), streamOf(bytes(10)))),
      "invalid",
      /too long/,
    );
    assert.deepEqual(temps(await filesUnder(root)), []);
  });
});

describe("FileDriver: list", () => {
  it("lists 2,050 keys page by page in UTF-8 byte order, not the folders' walk order", async () => {
    const { dir, root, driver } = await store("list");
    await using _ = dir;
    const made: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const key = `n/${i % 7}/${i}`;
      await mkdir(join(root, "n", `${i % 7}`), { recursive: true });
      await writeFile(join(root, key), `${i}`);
      made.push(key);
    }
    const special = [
      "\u{10000}",
      "\uE000",
      "é",
      "a/b",
      "a-c",
      "a b",
      "a/b0",
      "a0",
      "z",
      "Z",
      "~",
      "\u00FF",
    ];
    for (let i = 0; made.length < 2050; i++) {
      const key = special[i] ?? `p/${i}`;
      await driver.put(putOf(key, bytes(i + 1)));
      made.push(key);
    }
    const expected = [...made].sort(compareKeys);
    // The order a UTF-16 sort, or a walk of the folders, would give is not it.
    assert.notDeepEqual(expected, [...made].sort());
    assert.ok(
      expected.indexOf("a-c") < expected.indexOf("a/b") &&
        expected.indexOf("a b") < expected.indexOf("a-c"),
    );
    const pages = [];
    let start: string | undefined;
    do {
      const page = await driver.list("", 1000, start);
      pages.push(page.objects);
      start = page.next;
    } while (start !== undefined && pages.length < 4);
    assert.deepEqual(pages.map((page) => page.length), [1000, 1000, 50]);
    assert.deepEqual(pages.flat().map((object) => object.key), expected);
    for (const object of pages.flat().filter((object) => special.includes(object.key))) {
      const head = await driver.head(object.key);
      assert.deepEqual(object, {
        key: object.key,
        size: head?.size,
        etag: head?.etag,
        lastModified: head?.lastModified,
      });
    }
  });

  it("lists the keys starting with a prefix: a folder, part of a name, or none", async () => {
    const { dir, driver } = await store("prefix");
    await using _ = dir;
    for (const key of ["a b", "a-c", "a/b", "a/c/d", "a/cd", "ab", "b"]) {
      await driver.put(putOf(key, bytes(1)));
    }
    const cases: [string, string[]][] = [
      ["", ["a b", "a-c", "a/b", "a/c/d", "a/cd", "ab", "b"]],
      ["a", ["a b", "a-c", "a/b", "a/c/d", "a/cd", "ab"]],
      ["a/", ["a/b", "a/c/d", "a/cd"]],
      ["a/c", ["a/c/d", "a/cd"]],
      ["a/c/", ["a/c/d"]],
      ["a/b/", []],
      ["zz/", []],
      ["b", ["b"]],
    ];
    for (const [prefix, keys] of cases) {
      assert.deepEqual(await listAll(driver, prefix), keys, `prefix ${JSON.stringify(prefix)}`);
      assert.deepEqual(
        await listAll(driver, prefix, 1),
        keys,
        `prefix ${JSON.stringify(prefix)}, by one`,
      );
    }
  });

  it("skips temp files and the store's own folder, even while a put is writing", async () => {
    const { dir, root, driver } = await store("hidden");
    await using _ = dir;
    await driver.put(putOf("done", bytes(1)));
    const reading = deferred();
    const release = deferred();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (++pulls === 1) return controller.enqueue(bytes(10));
        reading.resolve();
        await release.promise;
        controller.close();
      },
    }, { highWaterMark: 0 });
    const writing = driver.put(putOf("late", body));
    await reading.promise;
    assert.equal(temps(await filesUnder(root)).length, 1);
    assert.deepEqual(await listAll(driver, ""), ["done"]);
    assert.deepEqual(await listAll(driver, "."), []);
    release.resolve();
    await writing;
    assert.deepEqual(await listAll(driver, ""), ["done", "late"]);
  });
});

describe("FileDriver: delete and copy", () => {
  it("delete removes the file, its sidecar and the folders left empty; a missing key is no error", async () => {
    const { dir, root, driver } = await store("delete");
    await using _ = dir;
    await driver.put(putOf("a/b/c", bytes(1)));
    await driver.put(putOf("a/x", bytes(1)));
    await driver.delete("a/b/c");
    assert.equal(await driver.head("a/b/c"), null);
    let files = await filesUnder(root);
    assert.deepEqual(sidecarsOf(files, "a/b/c"), []);
    await assert.rejects(lstat(join(root, "a", "b")), { code: "ENOENT" });
    await driver.delete("a/b/c");
    await driver.delete("never/was");
    await driver.delete("a/x");
    files = await filesUnder(root);
    assert.deepEqual(files, []);
    assert.deepEqual(await readdir(root), [".thaw-storage"]);
  });

  it("copy streams the object with its media type and metadata; false when there is none", async () => {
    const { dir, driver } = await store("copy");
    await using _ = dir;
    const data = bytes(200_000);
    await driver.put(putOf("from", data, { contentType: "image/png", metadata: { a: "1" } }));
    assert.equal(await driver.copy("from", "to/here"), true);
    for (const key of ["from", "to/here"]) {
      const got = await driver.get(key);
      assert.ok(got !== null);
      assert.deepEqual([got.contentType, got.metadata, got.etag], [
        "image/png",
        { a: "1" },
        etagOf(data),
      ]);
      sameBytes(await readAll(got.body), data, key);
    }
    assert.equal(await driver.copy("missing", "x"), false);
    assert.equal(await driver.head("x"), null);
    assert.equal(await driver.copy("from", "from"), true);
    assert.equal((await driver.head("from"))?.size, data.length);
  });
});

describe("FileDriver: symbolic links", () => {
  it("reads and writes nothing through a link to a folder or a file outside the store", async () => {
    const { dir, root, driver } = await store("links");
    await using _ = dir;
    const outside = join(dir.path, "outside");
    await mkdir(outside);
    await writeFile(join(outside, "secret"), "secret");
    await driver.put(putOf("ok", bytes(1)));
    await symlink(outside, join(root, "link"));
    await symlink(join(outside, "secret"), join(root, "file-link"));
    for (const key of ["link/secret", "link/new", "file-link"]) {
      await rejectsWith(driver.get(key), "invalid", /symbolic link/);
      await rejectsWith(driver.head(key), "invalid", /symbolic link/);
      await rejectsWith(driver.put(putOf(key, streamOf(bytes(5)))), "invalid", /symbolic link/);
      await rejectsWith(driver.put(putOf(key, bytes(5), { ifNoneMatch: true })), "invalid");
      await rejectsWith(driver.delete(key), "invalid", /symbolic link/);
      await rejectsWith(driver.copy(key, "copied"), "invalid", /symbolic link/);
      await rejectsWith(driver.copy("ok", key), "invalid", /symbolic link/);
    }
    await rejectsWith(driver.list("link/", 10), "invalid", /symbolic link/);
    assert.deepEqual(await listAll(driver, ""), ["ok"]);
    assert.deepEqual(await listAll(driver, "li"), []);
    assert.equal(await driver.head("copied"), null);
    assert.deepEqual(await readdir(outside), ["secret"]);
    assert.equal(await readFile(join(outside, "secret"), "utf8"), "secret");
    assert.deepEqual(temps(await filesUnder(root)), []);
  });

  it("writes no sidecar through a link put in place of the store's own folder", async () => {
    const { dir, root, driver } = await store("own-link");
    await using _ = dir;
    const outside = join(dir.path, "outside");
    await mkdir(outside);
    await mkdir(root);
    await symlink(outside, join(root, ".thaw-storage"));
    await rejectsWith(driver.put(putOf("k", streamOf(bytes(5)))), "invalid", /symbolic link/);
    assert.deepEqual(await readdir(outside), []);
    assert.deepEqual(await readdir(root), [".thaw-storage"]);
  });
});

describe("FileDriver: check", () => {
  it("makes a missing folder; a file in its place is unavailable", async () => {
    const { dir, root, driver } = await store("check");
    await using _ = dir;
    await driver.check();
    assert.ok((await lstat(root)).isDirectory());
    const file = join(dir.path, "file");
    await writeFile(file, "");
    await rejectsWith(new FileDriver(file).check(), "unavailable", /cannot be used/);
  });
});
