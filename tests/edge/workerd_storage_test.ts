// The S3 store on real workerd, against S3Proxy (tests/fixtures/storage/s3_worker.ts): a body
// longer than a part streams through the worker into a multipart upload and arrives whole,
// `response` answers ranges and 304s, a signed URL lets a plain fetch read the object, and a
// missing or deleted key is 404. The worker runs without nodejs_compat. What is checked is read
// from S3Proxy itself where it can be.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type ServedWorker, serveWorker, wranglerWorkerd } from "./workerd.ts";
import {
  bucketName,
  dropBucket,
  makeBucket,
  S3_CREDENTIALS,
  s3Object,
  S3PROXY,
} from "../storage/s3_server.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/storage/s3_worker.ts", import.meta.url));
const MiB = 1024 * 1024;

// Random, so that parts sent out of order or twice cannot still sum up right.
function randomBytes(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 65_536) {
    crypto.getRandomValues(bytes.subarray(at, Math.min(at + 65_536, size)));
  }
  return bytes;
}

async function sha256(bytes: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

describe("the S3 store on workerd, against S3Proxy", () => {
  const bucket = bucketName("workerd");
  let worker: ServedWorker;
  let origin: string;
  // What failed, and what workerd printed: an error inside the worker shows only there.
  const why = (what: string) => `${what}\n${worker.output()}`;

  before(async () => {
    await makeBucket(bucket);
    worker = await serveWorker(FIXTURE, "s3_worker", {
      // The workerd `wrangler dev` runs, at its own date, without nodejs_compat: a worker with
      // storage() must load there, whatever node: modules the file store would need.
      workerd: wranglerWorkerd(),
      loopbackOutbound: true,
      bindings: {
        BUCKET: bucket,
        S3_ENDPOINT: S3PROXY,
        S3_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
        S3_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
      },
      readyPath: "/nothing-here",
    });
    origin = worker.origin;
  });

  after(async () => {
    await worker?.close();
    // Dropped only when it was made: a second failure would hide why the first happened.
    if (worker !== undefined) await dropBucket(bucket);
  });

  it("a 20 MiB body streams through the worker as a multipart upload and arrives whole", async () => {
    const bytes = randomBytes(20 * MiB);
    const put = await fetch(`${origin}/files/big.bin`, { method: "PUT", body: bytes });
    const text = await put.text();
    assert.equal(put.status, 200, why(text));
    const info = JSON.parse(text);
    assert.equal(info.size, bytes.length, why(text));
    // S3's ETag of an object written in parts: the digest of the parts' digests, "-", their count.
    assert.match(info.etag, /-3"$/, why(text));
    const stored = await s3Object(bucket, "big.bin");
    assert.equal(stored.length, bytes.length);
    assert.equal(await sha256(stored), await sha256(bytes));
  });

  it("answers a range with 206 and a matching If-None-Match with 304", async () => {
    const put = await fetch(`${origin}/files/digits.txt`, { method: "PUT", body: "0123456789" });
    assert.equal(put.status, 200, why(await put.text()));
    const whole = await fetch(`${origin}/files/digits.txt`);
    assert.equal(await whole.text(), "0123456789", why(`${whole.status}`));
    const etag = whole.headers.get("etag");
    assert.ok(etag, why("no ETag"));
    const part = await fetch(`${origin}/files/digits.txt`, { headers: { range: "bytes=5-9" } });
    const five = await part.text();
    assert.equal(part.status, 206, why(five));
    assert.equal(part.headers.get("content-range"), "bytes 5-9/10");
    assert.equal(five, "56789");
    const again = await fetch(`${origin}/files/digits.txt`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304, why(await again.text()));
  });

  it("signs a URL that a plain fetch reads the object from S3Proxy with", async () => {
    const put = await fetch(`${origin}/files/signed.txt`, { method: "PUT", body: "signed bytes" });
    assert.equal(put.status, 200, why(await put.text()));
    const signed = await fetch(`${origin}/signed/signed.txt`);
    const { url } = await signed.json();
    assert.ok(String(url).startsWith(`${S3PROXY}/${bucket}/signed.txt?`), why(url));
    const read = await fetch(url);
    assert.equal(await read.text(), "signed bytes", why(`${read.status} from ${url}`));
  });

  it("answers 404 for a missing key, and for one deleted", async () => {
    const missing = await fetch(`${origin}/files/missing.bin`);
    assert.equal(missing.status, 404, why(await missing.text()));
    const put = await fetch(`${origin}/files/gone.txt`, { method: "PUT", body: "soon gone" });
    assert.equal(put.status, 200, why(await put.text()));
    const deleted = await fetch(`${origin}/files/gone.txt`, { method: "DELETE" });
    assert.equal(deleted.status, 204, why(await deleted.text()));
    const gone = await fetch(`${origin}/files/gone.txt`);
    assert.equal(gone.status, 404, why(await gone.text()));
  });
});
