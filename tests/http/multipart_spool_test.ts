// The temporary files of uploads: each part's file reads back as the bytes written, through every
// way a File is read, the platform's own included; release deletes them all.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { canSpool, UploadSpool } from "../../src/http/multipart_spool.ts";
import { suiteTempDirs } from "../temp_dir.ts";

const encoder = new TextEncoder();

describe("UploadSpool", () => {
  let location: string;
  const suiteDir = suiteTempDirs();
  before(async () => location = await suiteDir("thaw-spool-test-"));

  it("spools on Deno, Bun and Node", () => assert.equal(canSpool(), true));

  it("a part's file holds what was written, read every way a File is read", async () => {
    const spool = new UploadSpool(location);
    const target = await spool.create("f", "notes.txt", "application/x-notes");
    const text = "héllo, wörld: ".repeat(10_000);
    const bytes = encoder.encode(text);
    // In uneven pieces, as a body arrives.
    for (let at = 0; at < bytes.byteLength; at += 7777) {
      await target.write(bytes.subarray(at, at + 7777));
    }
    const file = await target.finish();
    assert.ok(file instanceof File);
    assert.deepEqual([file.name, file.type, file.size], [
      "notes.txt",
      "application/x-notes",
      bytes.byteLength,
    ]);
    assert.equal(await file.text(), text);
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);
    let streamed = "";
    const decoder = new TextDecoder();
    for await (const chunk of file.stream()) streamed += decoder.decode(chunk, { stream: true });
    assert.equal(streamed + decoder.decode(), text);
    assert.equal(await file.slice(0, 6).text(), "héllo");
    assert.equal(await file.slice(-8).text(), "wörld: ");
    assert.equal(await file.slice(3, 1).text(), "");
    assert.equal(await file.slice(6, 8).slice(1).text(), " ");
    // A fraction or NaN as an offset is rounded as the File API says (`[Clamp]`: to the nearest
    // whole number, a half to the even one; NaN is 0), the same on every runtime, whose own slices
    // disagree (Node 20 aborts on a fraction); stream, bytes and size say one range.
    const bytesOf = async (blob: Blob) =>
      new Uint8Array(await new Response(blob.stream()).arrayBuffer());
    const n = bytes.byteLength;
    const ranges: [number, number | undefined, number, number][] = [
      [0, 2.5, 0, 2],
      [0, 3.6, 0, 4],
      [1.9, 7.2, 2, 7],
      [NaN, 3, 0, 3],
      [-3.7, undefined, n - 4, n],
      [-4.5, -1.5, n - 4, n - 2],
      [2, NaN, 2, 2],
    ];
    for (const [start, end, from, to] of ranges) {
      const slice = file.slice(start, end);
      const want = bytes.subarray(from, to);
      assert.deepEqual(await bytesOf(slice), want, `slice(${start}, ${end}).stream()`);
      assert.deepEqual(new Uint8Array(await slice.arrayBuffer()), want, `slice(${start}, ${end})`);
      assert.equal(slice.size, to - from, `slice(${start}, ${end}).size`);
    }
    // The platform's own readers of a Blob.
    assert.equal(await new Response(file).text(), text);
    assert.equal(await new Blob([file]).text(), text);
    const form = new FormData();
    form.append("again", file);
    const again = (await new Response(form).formData()).get("again") as File;
    assert.deepEqual([again.name, again.size, await again.text()], ["notes.txt", file.size, text]);
    assert.equal((await readdir(location)).length, 1);
    await spool.release();
    assert.deepEqual(await readdir(location), []);
    await spool.release();
  });

  it("release deletes files still open, and refuses to make more", async () => {
    const spool = new UploadSpool(location);
    const open = await spool.create("f", "a.bin", "application/octet-stream");
    await open.write(new Uint8Array(10));
    assert.equal((await readdir(location)).length, 1);
    await spool.release();
    assert.deepEqual(await readdir(location), []);
    await assert.rejects(spool.create("g", "b.bin", "application/octet-stream"), {
      message: "Request part 'g' was not spooled: the request is done with its upload",
    });
    assert.deepEqual(await readdir(location), []);
  });

  it("a file still being made when release is called is gone once release resolves", async () => {
    // A request abandoned by its timeout answers 503 once release resolves: a part whose file was
    // being opened then must not leave it behind.
    const spool = new UploadSpool(location);
    const making = spool.create("f", "a.bin", "application/octet-stream")
      .then(() => "made", (error: Error) => error.message);
    await spool.release();
    assert.deepEqual(await readdir(location), []);
    assert.equal(
      await making,
      "Request part 'f' was not spooled: the request is done with its upload",
    );
    assert.deepEqual(await readdir(location), []);
  });

  it("a second release resolves once the files are deleted, as the first", async () => {
    // The request abandoned while its form is released calls it a second time: its 503 waits.
    const spool = new UploadSpool(location);
    const open = await spool.create("f", "a.bin", "application/octet-stream");
    await open.write(new Uint8Array(10));
    const first = spool.release();
    await spool.release();
    assert.deepEqual(await readdir(location), []);
    await first;
  });

  it("a folder it cannot write to is an error naming the part, the folder and the key", async () => {
    const spool = new UploadSpool(join(location, "missing", "folder"));
    await assert.rejects(
      spool.create("avatar", "a.png", "image/png"),
      (error: Error) => {
        assert.match(
          error.message,
          /^Request part 'avatar' could not be written to a temporary file in .*missing.folder \(server\.multipart\.location\): /,
        );
        return true;
      },
    );
  });
});
