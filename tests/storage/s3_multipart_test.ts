// Streams written to S3: one PutObject when the stream ends within a part, else a multipart
// upload with two parts in flight and three in memory at most, and every failure (a host that
// drops the parts, an <Error> in CompleteMultipartUpload's 200, a failing source, the caller
// giving up) ends with the upload aborted at S3, the source cancelled, and no object.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { PART_SIZE, partSizeFor } from "../../src/storage/s3_multipart.ts";
import {
  driverOf,
  type FakeS3,
  putOf,
  readAll,
  rejectsWith,
  sendError,
  startFakeS3,
} from "./fault_server.ts";

const MiB = 1024 * 1024;

// The byte at `offset` of every test body: no two parts alike.
const byteAt = (offset: number) => (offset * 31 + (offset >>> 13)) % 251;

/** A body read as it is pulled: how much was pulled, and whether it was cancelled. */
interface Source {
  readonly stream: ReadableStream<Uint8Array>;
  pulled: number;
  cancelled: boolean;
}

function source(size: number, options: { chunk?: number; failAt?: number } = {}): Source {
  const chunk = options.chunk ?? 256 * 1024;
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (options.failAt !== undefined && state.pulled >= options.failAt) {
        return controller.error(new Error("disk gone\nreally"));
      }
      if (state.pulled >= size) return controller.close();
      const bytes = new Uint8Array(Math.min(chunk, size - state.pulled));
      for (let i = 0; i < bytes.length; i++) bytes[i] = byteAt(state.pulled + i);
      state.pulled += bytes.length;
      controller.enqueue(bytes);
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return Object.assign(state, { stream });
}

function expected(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = byteAt(i);
  return bytes;
}

const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex");

describe("partSizeFor", () => {
  it("is 8 MiB, more when 10,000 parts of it are short of the size", () => {
    assert.equal(partSizeFor(undefined), PART_SIZE);
    assert.equal(partSizeFor(10_000 * PART_SIZE), PART_SIZE);
    assert.equal(partSizeFor(10_000 * PART_SIZE + 1), 9 * MiB);
    assert.equal(partSizeFor(5 * 1024 ** 4), 525 * MiB);
  });
});

describe("S3Driver.put from a stream", () => {
  let fake: FakeS3;
  before(async () => {
    fake = await startFakeS3(["bucket"]);
  });
  after(() => fake.close());
  const fresh = () => {
    fake.intercept = undefined;
    fake.calls.length = 0;
  };
  const objects = () => fake.buckets.get("bucket")!;

  it("sends a stream that ends within a part as one PutObject, sized or not", async () => {
    fresh();
    const driver = driverOf(fake.url);
    for (
      const [size, given] of [[0, undefined], [1, 1], [PART_SIZE, PART_SIZE], [1000, undefined]]
    ) {
      const body = source(size as number);
      const info = await driver.put(putOf(`one-${size}`, body.stream, { size: given }));
      assert.equal(info.size, size);
      assert.deepEqual(objects().get(`one-${size}`)!.bytes, expected(size as number));
    }
    assert.equal(fake.count("PutObject"), 4);
    assert.equal(fake.count("CreateMultipartUpload"), 0);
  });

  it("refuses a stream longer or shorter than its size, writing nothing", async () => {
    fresh();
    const driver = driverOf(fake.url);
    const longer = source(101);
    await rejectsWith(
      driver.put(putOf("long", longer.stream, { size: 100 })),
      "invalid",
      /longer than its size/,
    );
    assert.ok(longer.cancelled);
    await rejectsWith(
      driver.put(putOf("short", source(99).stream, { size: 100 })),
      "invalid",
      /ended after 99 bytes, its size said 100/,
    );
    const bigShort = source(PART_SIZE * 2 + 5);
    await rejectsWith(
      driver.put(putOf("big-short", bigShort.stream, { size: PART_SIZE * 3 })),
      "invalid",
      /its size said/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.equal(fake.count("PutObject"), 0);
    assert.equal(
      objects().has("long") || objects().has("short") || objects().has("big-short"),
      false,
    );
    assert.equal(fake.uploads.size, 0);
  });

  it("uploads a longer stream in 8 MiB parts, two at a time, type and metadata kept", async () => {
    fresh();
    const driver = driverOf(fake.url);
    const size = 20 * MiB + 1;
    const info = await driver.put(putOf("parts", source(size, { chunk: 100_000 }).stream, {
      contentType: "video/mp4",
      metadata: { title: "Übung" },
    }));
    const object = objects().get("parts")!;
    assert.equal(md5(object.bytes), md5(expected(size)));
    assert.equal(info.size, size);
    assert.equal(info.etag, object.etag);
    assert.match(info.etag, /^"[0-9a-f]{32}-3"$/);
    assert.deepEqual(
      fake.calls.filter((c) => c.operation === "UploadPart").map((c) => c.query.get("partNumber"))
        .sort(),
      ["1", "2", "3"].sort(),
    );
    assert.ok(fake.maxPartsInFlight <= 2);
    const head = await driver.head("parts");
    assert.equal(head?.contentType, "video/mp4");
    assert.deepEqual(head?.metadata, { title: "Übung" });
    const middle = await driver.get("parts", { offset: PART_SIZE - 2, length: 4 });
    assert.deepEqual(await readAll(middle!.body), expected(PART_SIZE + 2).subarray(PART_SIZE - 2));
    assert.deepEqual(fake.refused, []);
  });

  it("holds three parts at most, however long the stream", async () => {
    fresh();
    const driver = driverOf(fake.url);
    const size = 72 * MiB;
    const body = source(size, { chunk: 512 * 1024 });
    let most = 0;
    const before = fake.partBytes;
    const watch = setInterval(() => {
      most = Math.max(most, body.pulled - (fake.partBytes - before));
    }, 2);
    try {
      await driver.put(putOf("bounded", body.stream, { size }));
    } finally {
      clearInterval(watch);
    }
    // Pulled but not yet at the server: the part being read and the two on their way.
    assert.ok(most <= 3 * PART_SIZE + 512 * 1024, `${most / MiB} MiB held`);
    assert.equal(fake.count("UploadPart"), 9);
    assert.ok(fake.maxPartsInFlight <= 2);
    assert.equal(objects().get("bounded")!.bytes.length, size);
    objects().delete("bounded");
  });

  it("aborts the upload when the host drops the parts, and throws", async () => {
    fresh();
    const driver = driverOf(fake.url);
    fake.intercept = (call, req) => {
      if (call.operation !== "UploadPart" || call.query.get("partNumber") === "1") return false;
      req.socket.destroy();
      return true;
    };
    const body = source(60 * MiB);
    await rejectsWith(
      driver.put(putOf("dropped", body.stream)),
      "unavailable",
      /UploadPart [23]: S3's answer broke off|UploadPart [23]: S3 could not be reached/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.equal(fake.count("CompleteMultipartUpload"), 0);
    // Read no further than the parts that could be sent: the rest of the source is cancelled.
    assert.ok(body.cancelled);
    assert.ok(body.pulled <= 4 * PART_SIZE, `${body.pulled} bytes read`);
    assert.equal(objects().has("dropped"), false);
    assert.equal(fake.uploads.size, 0);
  });

  it("reads an <Error> in CompleteMultipartUpload's 200: sent again if not now, else aborted", async () => {
    fresh();
    const driver = driverOf(fake.url);
    let completes = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "CompleteMultipartUpload") return false;
      completes++;
      const code = completes === 1 ? "InternalError" : completes === 2 ? "" : "InvalidPart";
      if (code === "") return false;
      res.writeHead(200, { "content-type": "application/xml" });
      res.write(`<?xml version="1.0" encoding="UTF-8"?>\n`);
      res.end(`   \n<Error><Code>${code}</Code><Message>We are sorry</Message></Error>`);
      return true;
    };
    await driver.put(putOf("completed", source(9 * MiB).stream));
    assert.equal(completes, 2);
    assert.equal(objects().get("completed")!.bytes.length, 9 * MiB);
    await rejectsWith(
      driver.put(putOf("refused", source(9 * MiB).stream)),
      "invalid",
      /CompleteMultipartUpload: S3 answered 200 InvalidPart: "We are sorry"/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.equal(objects().has("refused"), false);
    assert.equal(fake.uploads.size, 0);
  });

  it("says, with the upload's own failure, that the upload could not be aborted", async () => {
    fresh();
    const driver = driverOf(fake.url);
    fake.intercept = (call, _req, res) => {
      if (call.operation === "UploadPart" && call.query.get("partNumber") === "2") {
        sendError(res, 400, "InvalidArgument", "Part number 2 is odd");
        return true;
      }
      if (call.operation !== "AbortMultipartUpload") return false;
      sendError(res, 403, "AccessDenied", "No abort for you");
      return true;
    };
    const fault = await rejectsWith(
      driver.put(putOf("unabortable", source(20 * MiB).stream)),
      "invalid",
      /UploadPart 2: S3 answered 400 InvalidArgument/,
    );
    assert.match(
      fault.message,
      /; the upload in parts \S+ was not aborted \(AbortMultipartUpload: S3 answered 403 AccessDenied/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    fake.uploads.clear();
  });

  it("says the outcome is unknown when the 412 of a CompleteMultipartUpload sent again may be its own", async () => {
    fresh();
    const driver = driverOf(fake.url);
    let completes = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "CompleteMultipartUpload") return false;
      if (completes++ === 0) {
        sendError(res, 500, "InternalError", "We encountered an internal error.");
        return true;
      }
      sendError(res, 412, "PreconditionFailed", "At least one of the preconditions failed");
      return true;
    };
    const fault = await rejectsWith(
      driver.put(putOf("twice", source(9 * MiB).stream, { ifNoneMatch: true })),
      "unavailable",
      /CompleteMultipartUpload: /,
    );
    assert.match(fault.message, /an earlier try may have written it/);
  });

  it("aborts the upload when the source fails, and says so", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await rejectsWith(
      driver.put(putOf("failing", source(40 * MiB, { failAt: 20 * MiB }).stream)),
      "aborted",
      /the body's stream failed: disk gone\\u000areally/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.equal(objects().has("failing"), false);
    assert.equal(fake.uploads.size, 0);
  });

  it("aborts the upload at once when the caller gives up", async () => {
    fresh();
    const driver = driverOf(fake.url);
    const controller = new AbortController();
    fake.intercept = (call) => {
      if (call.operation === "UploadPart" && call.query.get("partNumber") === "2") {
        controller.abort(new Error("user left"));
      }
      return false;
    };
    const body = source(100 * MiB);
    await rejectsWith(
      driver.put(putOf("given-up", body.stream, { signal: controller.signal })),
      "aborted",
      /given up/,
    );
    assert.ok(body.cancelled);
    assert.ok(body.pulled < 40 * MiB, `${body.pulled} bytes read`);
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.equal(objects().has("given-up"), false);
    assert.equal(fake.uploads.size, 0);
  });

  it("refuses a multipart write with ifNoneMatch before reading on, and by S3's 412", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("taken", new Uint8Array([1])));
    const body = source(20 * MiB);
    await rejectsWith(
      driver.put(putOf("taken", body.stream, { ifNoneMatch: true })),
      "exists",
      /CreateMultipartUpload: an object has the key/,
    );
    assert.equal(fake.count("CreateMultipartUpload"), 0);
    assert.ok(body.cancelled);
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "HeadObject") return false;
      res.writeHead(404).end();
      return true;
    };
    await rejectsWith(
      driver.put(putOf("taken", source(9 * MiB).stream, { ifNoneMatch: true })),
      "exists",
      /CompleteMultipartUpload: an object has the key/,
    );
    assert.equal(fake.count("AbortMultipartUpload"), 1);
    assert.deepEqual(objects().get("taken")!.bytes, new Uint8Array([1]));
  });

  it("reads no further when CreateMultipartUpload is refused", async () => {
    fresh();
    const driver = driverOf(fake.url);
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "CreateMultipartUpload") return false;
      sendError(res, 403, "AccessDenied", "no multipart for you");
      return true;
    };
    const body = source(20 * MiB);
    await rejectsWith(
      driver.put(putOf("denied", body.stream)),
      "denied",
      /CreateMultipartUpload: S3 answered 403 AccessDenied/,
    );
    assert.ok(body.cancelled);
    assert.equal(fake.count("UploadPart"), 0);
  });
});
