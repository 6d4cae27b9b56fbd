// S3Proxy, the S3 API server of the storage tests (tools/s3proxy.sh start: 127.0.0.1:9310, path
// style, key "thaw" / "thaw-secret"): each test file makes buckets of its own names, and reads what
// the driver under test cannot be trusted to report (the uploads in parts still open) by requests
// of its own, signed here.
import assert from "node:assert/strict";
import process from "node:process";
import { AwsV4Signer } from "aws4fetch";
import type { S3Settings } from "../../src/storage/s3_driver.ts";
import { encodeKeyPath } from "../../src/storage/s3_transport.ts";
import { childText, readXml, type XmlElement } from "../../src/storage/s3_xml.ts";

/** Where tools/s3proxy.sh serves. */
export const S3PROXY = "http://127.0.0.1:9310";
/** Who it lets in. */
export const S3_CREDENTIALS = { accessKeyId: "thaw", secretAccessKey: "thaw-secret" } as const;

let made = 0;

/** A bucket name of this process's own: `thaw-<what>-<pid>-<n>`. */
export function bucketName(what: string): string {
  return `thaw-${what}-${process.pid}-${(++made).toString(36)}-${Date.now().toString(36)}`;
}

/** The settings of a driver on `bucket` of S3Proxy, or of another endpoint (a fault proxy). */
export function s3Settings(bucket: string, settings: Partial<S3Settings> = {}): S3Settings {
  return {
    bucket,
    region: "us-east-1",
    endpoint: S3PROXY,
    pathStyle: true,
    ...S3_CREDENTIALS,
    prefix: "",
    timeoutMs: 30_000,
    ...settings,
  };
}

/** A request of the test's own to S3Proxy, signed; its answer's status and text. */
export async function s3Request(
  method: string,
  path: string,
): Promise<{ readonly status: number; readonly text: string }> {
  const answer = await s3Fetch(method, path);
  return { status: answer.status, text: await answer.text() };
}

/** The bytes of `key` in `bucket`, read by a request of the test's own. */
export async function s3Object(bucket: string, key: string): Promise<Uint8Array<ArrayBuffer>> {
  const answer = await s3Fetch("GET", `/${bucket}/${encodeKeyPath(key)}`);
  const bytes = new Uint8Array(await answer.arrayBuffer());
  assert.equal(
    answer.status,
    200,
    `S3Proxy's GET of ${key}: ${new TextDecoder().decode(bytes.subarray(0, 500))}`,
  );
  return bytes;
}

async function s3Fetch(method: string, path: string): Promise<Response> {
  const url = `${S3PROXY}${path}`;
  const signed = await new AwsV4Signer({
    method,
    url,
    ...S3_CREDENTIALS,
    region: "us-east-1",
    service: "s3",
  }).sign();
  try {
    return await fetch(signed.url, { method, headers: signed.headers });
  } catch (error) {
    throw new Error(
      `S3Proxy does not answer at ${S3PROXY}: start it with tools/s3proxy.sh start (${error})`,
    );
  }
}

/** Makes `bucket`; fails, naming the script that starts the server, when S3Proxy is down. */
export async function makeBucket(bucket: string): Promise<void> {
  const { status, text } = await s3Request("PUT", `/${bucket}`);
  assert.equal(status, 200, `making bucket ${bucket}: ${status} ${text}`);
}

/**
 * Deletes `bucket` with every object and open upload in it. S3Proxy keeps its objects on the
 * machine's disk until its next start: the suite writes gigabytes a run, and a search node on a
 * disk past its watermark stops placing replicas.
 */
export async function dropBucket(bucket: string): Promise<void> {
  // Each pass lists the first page again. S3Proxy lists a folder of its file system as a key
  // ending in "/" until what is in it is gone, so a key may come back a pass later; one that keeps
  // coming back (a writer still at work, a key the listing does not give back whole) fails here.
  for (let pass = 1;; pass++) {
    const page = await s3Request("GET", `/${bucket}?list-type=2&max-keys=1000`);
    assert.equal(page.status, 200, `listing ${bucket}: ${page.status} ${page.text}`);
    const keys = childrenText(readXml(page.text), "Contents", "Key");
    if (keys.length === 0) break;
    assert.ok(pass <= 20, `${bucket} still lists ${JSON.stringify(keys.slice(0, 5))}`);
    for (const key of keys) {
      const answer = await s3Request("DELETE", `/${bucket}/${encodeKeyPath(key)}`);
      assert.equal(answer.status, 204, `deleting ${key} of ${bucket}: ${answer.text}`);
    }
  }
  const uploads = await s3Request("GET", `/${bucket}?uploads=`);
  assert.equal(uploads.status, 200, `listing the uploads of ${bucket}: ${uploads.text}`);
  for (const upload of readXml(uploads.text).children.filter((c) => c.name === "Upload")) {
    const key = childText(upload, "Key") ?? "";
    const id = encodeURIComponent(childText(upload, "UploadId") ?? "");
    const answer = await s3Request("DELETE", `/${bucket}/${encodeKeyPath(key)}?uploadId=${id}`);
    assert.equal(answer.status, 204, `aborting the upload of ${key} in ${bucket}: ${answer.text}`);
  }
  const dropped = await s3Request("DELETE", `/${bucket}`);
  assert.equal(dropped.status, 204, `deleting bucket ${bucket}: ${dropped.text}`);
}

// The text of each `child` of the root's `parent` children.
function childrenText(root: XmlElement, parent: string, child: string): string[] {
  return root.children.filter((c) => c.name === parent).map((c) => childText(c, child) ?? "");
}

/** The keys of the uploads in parts begun in `bucket` and neither completed nor aborted. */
export async function openUploads(bucket: string): Promise<string[]> {
  const { status, text } = await s3Request("GET", `/${bucket}?uploads=`);
  assert.equal(status, 200, `listing the uploads of ${bucket}: ${status} ${text}`);
  return [...text.matchAll(/<Upload>[\s\S]*?<Key>([^<]*)<\/Key>/g)].map((match) =>
    match[1] as string
  );
}
