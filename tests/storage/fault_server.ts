// Loopback servers for the S3 driver's unit tests, on node:http and node:net (which Deno, Bun and
// Node all run): a tiny in-memory S3 (path-style, one region), enough of the API for the driver,
// that checks every request's SigV4 signature with the AWS SDK's own signer and lets a test step
// in before any request (to answer 503, 403, an <Error> in a 200, or to drop the connection); and
// a host that takes connections and never answers. With them, what the storage tests share to
// drive the driver: a driver of the fake, a write's defaults, a fault's checks.
import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import { SignatureV4 } from "@smithy/signature-v4";
import { S3Driver, type S3Settings } from "../../src/storage/s3_driver.ts";
import {
  type DriverPut,
  StorageFault,
  type StorageFaultKind,
} from "../../src/storage/storage_driver.ts";

/** The fake's one identity: the secret must never show in a message. */
export const FAKE_CREDENTIALS = {
  accessKeyId: "FAKEKEYID0123456789",
  secretAccessKey: "fake/SECRET+value-0123456789abcdef",
} as const;
/** The fake's region. */
export const FAKE_REGION = "us-east-1";

/** The fake's secrets, which no message may hold. */
export const SECRETS: readonly string[] = [
  FAKE_CREDENTIALS.secretAccessKey,
  FAKE_CREDENTIALS.accessKeyId,
];

/** A driver of the fake's bucket (or of `settings`' own). */
export function driverOf(url: string, settings: Partial<S3Settings> = {}): S3Driver {
  return new S3Driver({
    bucket: "bucket",
    region: FAKE_REGION,
    endpoint: url,
    pathStyle: true,
    ...FAKE_CREDENTIALS,
    prefix: "",
    timeoutMs: 2_000,
    ...settings,
  });
}

/** What put() is given, with the defaults of a plain write. */
export function putOf(
  key: string,
  body: DriverPut["body"],
  more: Partial<DriverPut> = {},
): DriverPut {
  return {
    key,
    body,
    contentType: "application/octet-stream",
    metadata: {},
    ifNoneMatch: false,
    ...more,
  };
}

/** Every byte of a stream. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Asserts `promise` rejects with a StorageFault of `kind` whose message matches, with no secret. */
export async function rejectsWith(
  promise: Promise<unknown>,
  kind: StorageFaultKind,
  message: RegExp,
): Promise<StorageFault> {
  const error = await promise.then(
    () => assert.fail(`expected a StorageFault("${kind}")`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof StorageFault, `not a StorageFault: ${error}`);
  assert.equal(error.kind, kind, error.message);
  assert.match(error.message, message);
  for (const secret of SECRETS) assert.ok(!error.message.includes(secret), error.message);
  return error;
}

/** One request as the fake saw it. */
export interface FakeCall {
  /** The S3 operation: `PutObject`, `UploadPart`, `AbortMultipartUpload`... */
  readonly operation: string;
  readonly method: string;
  readonly bucket: string;
  /** The key, decoded from the path ("" for the bucket). */
  readonly key: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
}

/** Steps in before the fake handles `call`: `true` when it answered (or dropped) it itself. */
export type Intercept = (
  call: FakeCall,
  req: IncomingMessage,
  res: ServerResponse,
) => boolean | Promise<boolean>;

/** An object the fake holds. */
export interface FakeObject {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  /** The `x-amz-meta-*` headers as received (S3Proxy keeps them so too). */
  readonly metadata: Readonly<Record<string, string>>;
  readonly etag: string;
  readonly lastModified: Date;
}

/** A multipart upload under way. */
export interface FakeUpload {
  readonly key: string;
  /** Its CreateMultipartUpload's headers: the object's type and metadata. */
  readonly headers: IncomingMessage["headers"];
  readonly parts: Map<number, Uint8Array>;
}

/** A running fake S3. */
export interface FakeS3 {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The buckets, each a map of its objects by key. */
  readonly buckets: Map<string, Map<string, FakeObject>>;
  /** The multipart uploads under way, by id. */
  readonly uploads: Map<string, FakeUpload>;
  /** Every request, in the order it came. */
  readonly calls: FakeCall[];
  /** Signatures that did not hold, with why: a test expects none. */
  readonly refused: string[];
  /** Steps in before each request. */
  intercept: Intercept | undefined;
  /** Writes the listing's text with every character past ASCII as a character reference. */
  listingReferences: boolean;
  /** The most UploadPart requests at once, so far. */
  readonly maxPartsInFlight: number;
  /** The bytes of the parts received so far. */
  readonly partBytes: number;
  /** How many requests were made of `operation`. */
  count(operation: string): number;
  close(): Promise<void>;
}

/** Starts the fake, with `buckets` made. */
export async function startFakeS3(buckets: readonly string[] = ["bucket"]): Promise<FakeS3> {
  const state = new FakeState(buckets);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    state.handle(req, res).catch(() => req.socket.destroy());
  });
  track(server as unknown as Server, sockets);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return Object.assign(state, {
    url,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  }) as unknown as FakeS3;
}

/** A host that takes every connection and never answers: `connections` counts them. */
export async function startSilentHost(): Promise<
  { readonly url: string; readonly connections: () => number; close(): Promise<void> }
> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer(() => connections++);
  track(server, sockets);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function track(server: Server, sockets: Set<Socket>): void {
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
}

/** An S3 error answer, as S3 words it. */
export function sendError(res: ServerResponse, status: number, code: string, message = code): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code>` +
    `<Message>${escape(message, false)}</Message><RequestId>FAKE</RequestId></Error>`;
  res.writeHead(status, { "content-type": "application/xml" }).end(body);
}

function escape(text: string, references: boolean): string {
  const named: Record<string, string> = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&apos;",
  };
  let out = "";
  for (const c of text) {
    const code = c.codePointAt(0)!;
    if (named[c] !== undefined) out += named[c];
    // Decimal for even code points, hexadecimal for odd ones: the reader meets both.
    else if (references && code > 0x7e) {
      out += code % 2 === 0 ? `&#${code};` : `&#x${code.toString(16)};`;
    } else out += c;
  }
  return out;
}

const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex");

class FakeState {
  readonly buckets = new Map<string, Map<string, FakeObject>>();
  readonly uploads = new Map<string, FakeUpload>();
  readonly calls: FakeCall[] = [];
  readonly refused: string[] = [];
  intercept: Intercept | undefined;
  listingReferences = false;
  maxPartsInFlight = 0;
  partBytes = 0;
  #partsInFlight = 0;
  #uploadIds = 0;

  constructor(buckets: readonly string[]) {
    for (const bucket of buckets) this.buckets.set(bucket, new Map());
  }

  count(operation: string): number {
    return this.calls.filter((call) => call.operation === operation).length;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const [bucket = "", ...segments] = url.pathname.slice(1).split("/");
    const key = segments.map(decodeURIComponent).join("/");
    const call: FakeCall = {
      operation: operationOf(req.method ?? "GET", key, url.searchParams, req.headers),
      method: req.method ?? "GET",
      bucket,
      key,
      query: url.searchParams,
      headers: req.headers,
    };
    this.calls.push(call);
    const problem = await signatureProblem(req, url);
    if (problem !== undefined) {
      this.refused.push(`${call.operation}: ${problem}`);
      return sendError(res, 403, "SignatureDoesNotMatch", problem);
    }
    const part = call.operation === "UploadPart";
    if (part) this.maxPartsInFlight = Math.max(this.maxPartsInFlight, ++this.#partsInFlight);
    try {
      if (await this.intercept?.(call, req, res)) return;
      const chunks: Uint8Array[] = [];
      for await (const chunk of req) {
        chunks.push(chunk as Uint8Array);
        if (part) this.partBytes += (chunk as Uint8Array).length;
      }
      this.#serve(call, new Uint8Array(Buffer.concat(chunks)), res);
    } finally {
      if (part) this.#partsInFlight--;
    }
  }

  #serve(call: FakeCall, body: Uint8Array, res: ServerResponse): void {
    if (call.operation === "CreateBucket") {
      this.buckets.set(call.bucket, this.buckets.get(call.bucket) ?? new Map());
      return void res.writeHead(200).end();
    }
    const objects = this.buckets.get(call.bucket);
    if (objects === undefined) {
      if (call.method === "HEAD") return void res.writeHead(404).end();
      return sendError(res, 404, "NoSuchBucket", "The specified bucket does not exist");
    }
    const handler = this.#handlers[call.operation];
    if (handler === undefined) return sendError(res, 501, "NotImplemented", call.operation);
    handler(call, body, res, objects);
  }

  readonly #handlers: Record<
    string,
    (
      call: FakeCall,
      body: Uint8Array,
      res: ServerResponse,
      objects: Map<string, FakeObject>,
    ) => void
  > = {
    HeadBucket: (_call, _body, res) => void res.writeHead(200).end(),
    ListObjectsV2: (call, _body, res, objects) => this.#list(call, res, objects),
    PutObject: (call, body, res, objects) => {
      if (call.headers["if-none-match"] === "*" && objects.has(call.key)) {
        return sendError(
          res,
          412,
          "PreconditionFailed",
          "At least one of the preconditions failed",
        );
      }
      const object = made(body, call.headers);
      objects.set(call.key, object);
      res.writeHead(200, { etag: object.etag }).end();
    },
    CopyObject: (call, _body, res, objects) => {
      const source = String(call.headers["x-amz-copy-source"]);
      const [, bucket, ...rest] = source.split("/");
      const from = this.buckets.get(bucket)?.get(rest.map(decodeURIComponent).join("/"));
      if (from === undefined) {
        return sendError(res, 404, "NoSuchKey", "The specified key does not exist.");
      }
      objects.set(call.key, { ...from, lastModified: new Date() });
      res.writeHead(200, { "content-type": "application/xml" })
        .end(`<CopyObjectResult><ETag>${escape(from.etag, false)}</ETag></CopyObjectResult>`);
    },
    GetObject: (call, _body, res, objects) => this.#get(call, res, objects.get(call.key)),
    HeadObject: (call, _body, res, objects) => {
      const object = objects.get(call.key);
      if (object === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { ...objectHeaders(object), "content-length": object.bytes.length }).end();
    },
    DeleteObject: (call, _body, res, objects) => {
      objects.delete(call.key);
      res.writeHead(204).end();
    },
    CreateMultipartUpload: (call, _body, res) => {
      const id = `upload-${++this.#uploadIds}`;
      this.uploads.set(id, { key: call.key, headers: call.headers, parts: new Map() });
      res.writeHead(200, { "content-type": "application/xml" }).end(
        `<InitiateMultipartUploadResult><Key>${escape(call.key, false)}</Key>` +
          `<UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
      );
    },
    UploadPart: (call, body, res) => {
      const upload = this.uploads.get(call.query.get("uploadId") ?? "");
      if (upload === undefined) return sendError(res, 404, "NoSuchUpload");
      upload.parts.set(Number(call.query.get("partNumber")), body);
      res.writeHead(200, { etag: `"${md5(body)}"` }).end();
    },
    CompleteMultipartUpload: (call, body, res, objects) =>
      this.#complete(call, new TextDecoder().decode(body), res, objects),
    AbortMultipartUpload: (call, _body, res) => {
      const found = this.uploads.delete(call.query.get("uploadId") ?? "");
      if (!found) return sendError(res, 404, "NoSuchUpload");
      res.writeHead(204).end();
    },
  };

  #get(call: FakeCall, res: ServerResponse, object: FakeObject | undefined): void {
    if (object === undefined) {
      return sendError(res, 404, "NoSuchKey", "The specified key does not exist.");
    }
    const size = object.bytes.length;
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(call.headers.range ?? ""));
    if (range === null) {
      res.writeHead(200, { ...objectHeaders(object), "content-length": size });
      return void res.end(object.bytes);
    }
    const first = Number(range[1]);
    const last = Math.min(range[2] === "" ? size - 1 : Number(range[2]), size - 1);
    if (first >= size) {
      res.setHeader("content-range", `bytes */${size}`);
      return sendError(res, 416, "InvalidRange", "The requested range is not satisfiable");
    }
    res.writeHead(206, {
      ...objectHeaders(object),
      "content-range": `bytes ${first}-${last}/${size}`,
      "content-length": last - first + 1,
    });
    res.end(object.bytes.subarray(first, last + 1));
  }

  #list(call: FakeCall, res: ServerResponse, objects: Map<string, FakeObject>): void {
    const prefix = call.query.get("prefix") ?? "";
    const max = Number(call.query.get("max-keys") ?? "1000");
    const token = call.query.get("continuation-token");
    const after = token === null
      ? call.query.get("start-after") ?? ""
      : Buffer.from(token, "base64url").toString("utf8");
    const keys = [...objects.keys()].filter((key) =>
      key.startsWith(prefix) &&
      Buffer.compare(Buffer.from(key), Buffer.from(after)) > 0
    )
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const page = keys.slice(0, max);
    const truncated = keys.length > max;
    const text = (value: string) => escape(value, this.listingReferences);
    const contents = page.map((key) => {
      const object = objects.get(key)!;
      return `<Contents><Key>${text(key)}</Key><LastModified>${object.lastModified.toISOString()}` +
        `</LastModified><ETag>${text(object.etag)}</ETag><Size>${object.bytes.length}</Size>` +
        `<StorageClass>STANDARD</StorageClass></Contents>`;
    }).join("\n  ");
    const next = truncated
      ? `<NextContinuationToken>${
        Buffer.from(page.at(-1)!).toString("base64url")
      }</NextContinuationToken>`
      : "";
    res.writeHead(200, { "content-type": "application/xml" }).end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult ` +
        `xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n  <Name>${call.bucket}</Name>` +
        `<Prefix>${
          text(prefix)
        }</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys>` +
        `<IsTruncated>${truncated}</IsTruncated>${next}\n  ${contents}\n</ListBucketResult>`,
    );
  }

  #complete(call: FakeCall, xml: string, res: ServerResponse, objects: Map<string, FakeObject>) {
    const id = call.query.get("uploadId") ?? "";
    const upload = this.uploads.get(id);
    if (upload === undefined) return sendError(res, 404, "NoSuchUpload");
    const listed = [...xml.matchAll(/<PartNumber>(\d+)<\/PartNumber><ETag>([^<]*)<\/ETag>/g)];
    const parts: Uint8Array[] = [];
    for (const [index, [, number, etag]] of listed.entries()) {
      const bytes = upload.parts.get(Number(number));
      const sent = etag.replaceAll("&quot;", '"');
      const small = index < listed.length - 1 && bytes !== undefined && bytes.length < 5 * 2 ** 20;
      if (
        Number(number) !== index + 1 || bytes === undefined || sent !== `"${md5(bytes)}"` || small
      ) {
        return sendError(res, 400, small ? "EntityTooSmall" : "InvalidPart", `part ${number}`);
      }
      parts.push(bytes);
    }
    if (call.headers["if-none-match"] === "*" && objects.has(call.key)) {
      return sendError(res, 412, "PreconditionFailed", "At least one of the preconditions failed");
    }
    const whole = new Uint8Array(Buffer.concat(parts));
    const etag = `"${md5(whole)}-${parts.length}"`;
    objects.set(call.key, { ...made(whole, upload.headers), etag });
    this.uploads.delete(id);
    res.writeHead(200, { "content-type": "application/xml" }).end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<CompleteMultipartUploadResult><Key>` +
        `${escape(call.key, false)}</Key><ETag>${escape(etag, false)}</ETag>` +
        `</CompleteMultipartUploadResult>`,
    );
  }
}

// The object a write makes, with the type and metadata of `headers` (a multipart upload's: its
// CreateMultipartUpload's).
function made(bytes: Uint8Array, headers: IncomingMessage["headers"]): FakeObject {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith("x-amz-meta-") && typeof value === "string") metadata[name] = value;
  }
  return {
    bytes,
    contentType: String(headers["content-type"] ?? "binary/octet-stream"),
    metadata,
    etag: `"${md5(bytes)}"`,
    lastModified: new Date(Math.floor(Date.now() / 1000) * 1000),
  };
}

function objectHeaders(object: FakeObject): Record<string, string> {
  return {
    "content-type": object.contentType,
    etag: object.etag,
    "last-modified": object.lastModified.toUTCString(),
    ...object.metadata,
  };
}

function operationOf(
  method: string,
  key: string,
  query: URLSearchParams,
  headers: IncomingMessage["headers"],
): string {
  if (key === "") {
    if (method === "PUT") return "CreateBucket";
    return method === "HEAD" ? "HeadBucket" : method === "GET" ? "ListObjectsV2" : method;
  }
  if (query.has("uploads")) return "CreateMultipartUpload";
  if (query.has("uploadId")) {
    if (method === "PUT") return "UploadPart";
    return method === "POST" ? "CompleteMultipartUpload" : "AbortMultipartUpload";
  }
  if (method === "PUT") return headers["x-amz-copy-source"] ? "CopyObject" : "PutObject";
  const names: Record<string, string> = {
    GET: "GetObject",
    HEAD: "HeadObject",
    DELETE: "DeleteObject",
  };
  return names[method] ?? method;
}

// SHA-256 and HMAC on node:crypto, as @smithy/signature-v4 takes them: independent of the Web
// Crypto aws4fetch signs with.
class NodeSha256 {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined
      ? createHash("sha256")
      : createHmac("sha256", bytesOf(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {}
}

function bytesOf(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === "string") return data;
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  return new Uint8Array(data);
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/\s]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

// S3's canonical URI: each segment of the path decoded, then encoded once as RFC 3986 says.
function canonicalPath(pathname: string): string {
  return pathname.split("/").map((segment) =>
    encodeURIComponent(decodeURIComponent(segment)).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    )
  ).join("/");
}

// Why the request's signature does not hold, checked as S3 checks it; `undefined` when it holds.
async function signatureProblem(req: IncomingMessage, url: URL): Promise<string | undefined> {
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(",") : value;
  };
  const match = AUTHORIZATION.exec(header("authorization") ?? "");
  if (match === null) return "no SigV4 Authorization header";
  const [, keyId, , region, signedList] = match;
  if (keyId !== FAKE_CREDENTIALS.accessKeyId) return "unknown access key id";
  if (region !== FAKE_REGION) return `region ${region}`;
  if (header("x-amz-content-sha256") !== "UNSIGNED-PAYLOAD") return "no UNSIGNED-PAYLOAD";
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(header("x-amz-date") ?? "");
  if (date === null) return "no x-amz-date";
  const [, y, mo, d, h, mi, s] = date.map(Number);
  const signedAt = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const headers: Record<string, string> = {};
  for (const name of signedList.split(";")) {
    if (name === "x-amz-date") continue;
    const value = header(name);
    if (value === undefined) return `signed header ${name} is missing`;
    headers[name] = value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signer = new SignatureV4({
    credentials: FAKE_CREDENTIALS,
    region: FAKE_REGION,
    service: "s3",
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const expected = await signer.sign({
    method: req.method ?? "GET",
    protocol: "http:",
    hostname: "127.0.0.1",
    path: canonicalPath(url.pathname),
    query,
    headers,
  }, { signingDate: signedAt });
  return expected.headers.authorization === header("authorization")
    ? undefined
    : "signature mismatch";
}
