// S3Proxy, the S3 API server of the storage tests (tools/s3proxy.sh start: 127.0.0.1:9310, path
// style, key "thaw" / "thaw-secret"): each test file makes buckets of its own names, and reads what
// the driver under test cannot be trusted to report (the uploads in parts still open) by requests
// of its own, signed here.
import assert from "node:assert/strict";
import process from "node:process";
import { AwsV4Signer } from "aws4fetch";
import type { S3Settings } from "../../src/storage/s3_driver.ts";
import { decodeXmlText } from "../../src/storage/s3_xml.ts";

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
  const answer = await s3Fetch("GET", `/${bucket}/${encodeKey(key)}`);
  const bytes = new Uint8Array(await answer.arrayBuffer());
  assert.equal(answer.status, 200, `S3Proxy's GET of ${key}: ${new TextDecoder().decode(bytes)}`);
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
  for (;;) {
    const { status, text } = await s3Request("GET", `/${bucket}?list-type=2&max-keys=1000`);
    assert.equal(status, 200, `listing ${bucket}: ${status} ${text}`);
    const keys = [...text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) =>
      decodeXmlText(match[1] as string)
    );
    if (keys.length === 0) break;
    for (const key of keys) {
      const deleted = await s3Request("DELETE", `/${bucket}/${encodeKey(key)}`);
      assert.equal(deleted.status, 204, `deleting ${key} of ${bucket}: ${deleted.text}`);
    }
  }
  const { status, text } = await s3Request("GET", `/${bucket}?uploads=`);
  assert.equal(status, 200, `listing the uploads of ${bucket}: ${status} ${text}`);
  for (const upload of text.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)) {
    const key = decodeXmlText(/<Key>([^<]*)<\/Key>/.exec(upload[1] as string)?.[1] ?? "");
    const id = decodeXmlText(/<UploadId>([^<]*)<\/UploadId>/.exec(upload[1] as string)?.[1] ?? "");
    await s3Request("DELETE", `/${bucket}/${encodeKey(key)}?uploadId=${encodeURIComponent(id)}`);
  }
  const dropped = await s3Request("DELETE", `/${bucket}`);
  assert.equal(dropped.status, 204, `deleting bucket ${bucket}: ${dropped.text}`);
}

/** A key as a path: RFC 3986, which the signature is computed over, escapes `!'()*` too. */
function encodeKey(key: string): string {
  return key.split("/").map((segment) =>
    encodeURIComponent(segment).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    )
  ).join("/");
}

/** The keys of the uploads in parts begun in `bucket` and neither completed nor aborted. */
export async function openUploads(bucket: string): Promise<string[]> {
  const { status, text } = await s3Request("GET", `/${bucket}?uploads=`);
  assert.equal(status, 200, `listing the uploads of ${bucket}: ${status} ${text}`);
  return [...text.matchAll(/<Upload>[\s\S]*?<Key>([^<]*)<\/Key>/g)].map((match) =>
    match[1] as string
  );
}
