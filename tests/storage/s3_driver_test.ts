// The S3 driver against loopback fakes (fault_server.ts): every operation on a small in-memory S3
// that checks each signature with the AWS SDK's signer, the URL of any key, and the faults: a host
// that never answers, 503s then success, 403, redirects, errors inside a 200, missing buckets.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { AwsV4Signer } from "aws4fetch";
import { Buffer } from "node:buffer";
import { S3Driver, type S3Settings } from "../../src/storage/s3_driver.ts";
import { encodeKeyPath } from "../../src/storage/s3_transport.ts";
import { keyProblem } from "../../src/storage/storage_key.ts";
import {
  driverOf,
  FAKE_CREDENTIALS,
  type FakeS3,
  putOf,
  readAll,
  rejectsWith,
  SECRETS,
  sendError,
  startFakeS3,
  startSilentHost,
} from "./fault_server.ts";
import { propertyOptions } from "../property.ts";

const encoder = new TextEncoder();

// A key's segments: printable ASCII but `/`, and characters past it, each UTF-16 length.
const segmentCharacter = fc.oneof(
  fc.constantFrom(..." !\"#$%&'()*+,-.0123456789:;<=>?@AZ[\\]^_`az{|}~"),
  fc.constantFrom("é", "ü", "中", "\u00a0", "\ufeff", "😀", "\u{10ffff}", "\u2028"),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
);
const validKey = fc.array(
  fc.string({ unit: segmentCharacter, minLength: 1, maxLength: 12 }),
  { minLength: 1, maxLength: 4 },
).map((segments) => segments.join("/")).filter((key) => keyProblem(key) === undefined);

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
  .filter((c) => c !== "/").join("");

describe("S3 object URLs", () => {
  it("are what SigV4 signs, and give the key back, for any valid key", () => {
    fc.assert(
      fc.property(validKey, fc.constantFrom("", "/base"), (key, base) => {
        const url = new URL(`https://s3.example.com${base}/bucket/${encodeKeyPath(key)}`);
        // The URL parser leaves the path as written: what is sent is what was signed.
        assert.equal(url.pathname, `${base}/bucket/${encodeKeyPath(key)}`);
        assert.match(url.pathname, /^[A-Za-z0-9\-._~%/]*$/);
        const signer = new AwsV4Signer({
          url: url.href,
          service: "s3",
          region: "us-east-1",
          accessKeyId: "a",
          secretAccessKey: "b",
        });
        assert.equal(signer.encodedPath, url.pathname);
        const decoded = url.pathname.split("/").slice(base === "" ? 2 : 3).map(decodeURIComponent);
        assert.equal(decoded.join("/"), key);
      }),
      propertyOptions(300),
    );
  });

  it("encode every printable ASCII character but the unreserved ones", () => {
    assert.equal(
      encodeKeyPath(`a/${PRINTABLE}`),
      "a/%20%21%22%23%24%25%26%27%28%29%2A%2B%2C-.0123456789%3A%3B%3C%3D%3E%3F%40ABCDEFGHIJKLMNOPQRSTUVWXYZ" +
        "%5B%5C%5D%5E_%60abcdefghijklmnopqrstuvwxyz%7B%7C%7D~",
    );
  });
});

describe("S3Driver on a fake S3", () => {
  let fake: FakeS3;
  before(async () => {
    fake = await startFakeS3(["bucket"]);
  });
  after(() => fake.close());
  const fresh = () => {
    fake.intercept = undefined;
    fake.calls.length = 0;
    fake.listingReferences = false;
  };

  it("writes, reads, copies and deletes any key, every signature holding", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await fc.assert(
      fc.asyncProperty(validKey, async (key) => {
        const bytes = encoder.encode(`body of ${key}`);
        const written = await driver.put(putOf(key, bytes, { contentType: "image/png" }));
        assert.equal(written.size, bytes.length);
        assert.ok(fake.buckets.get("bucket")!.has(key));
        const read = await driver.get(key);
        assert.ok(read !== null);
        assert.deepEqual(await readAll(read.body), bytes);
        assert.equal(read.contentType, "image/png");
        assert.equal(read.etag, written.etag);
        assert.equal(await driver.copy(key, `${key}.copy`), true);
        assert.equal((await driver.head(`${key}.copy`))?.size, bytes.length);
        await driver.delete(key);
        await driver.delete(`${key}.copy`);
        assert.equal(await driver.head(key), null);
      }),
      propertyOptions(25),
    );
    assert.deepEqual(fake.refused, []);
  });

  it("keeps metadata, whatever its text, and the media type", async () => {
    fresh();
    const driver = driverOf(fake.url);
    const metadata = { owner: "Zoë 😀", plain: "yes", spaced: " both ends " };
    await driver.put(putOf("meta", encoder.encode("x"), { metadata, contentType: "text/csv" }));
    assert.equal(fake.buckets.get("bucket")!.get("meta")!.metadata["x-amz-meta-plain"], "yes");
    const head = await driver.head("meta");
    assert.deepEqual(head?.metadata, metadata);
    assert.equal(head?.contentType, "text/csv");
    assert.ok(head!.lastModified instanceof Date && !Number.isNaN(head!.lastModified.getTime()));
    assert.match(head!.etag, /^"[0-9a-f]{32}"$/);
    const got = await driver.get("meta");
    assert.deepEqual(got?.metadata, metadata);
    await got?.body.cancel();
  });

  it("reads a range, says where it is, and the whole object's size", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("ten", encoder.encode("0123456789")));
    const middle = await driver.get("ten", { offset: 2, length: 3 });
    assert.equal(new TextDecoder().decode(await readAll(middle!.body)), "234");
    assert.deepEqual(middle!.range, { offset: 2, length: 3 });
    assert.equal(middle!.size, 10);
    const tail = await driver.get("ten", { offset: 7, length: 100 });
    assert.deepEqual(tail!.range, { offset: 7, length: 3 });
    assert.equal(new TextDecoder().decode(await readAll(tail!.body)), "789");
    const open = await driver.get("ten", { offset: 9 });
    assert.deepEqual(open!.range, { offset: 9, length: 1 });
    await open!.body.cancel();
    await rejectsWith(
      driver.get("ten", { offset: 10 }),
      "range",
      /byte 10, past the end.* 10 bytes/,
    );
    assert.equal(await driver.get("missing", { offset: 1 }), null);
  });

  it("answers an empty object to a range at byte 0, which S3 answers 416", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("empty", new Uint8Array(0)));
    const empty = await driver.get("empty", { offset: 0 });
    assert.equal(empty?.size, 0);
    assert.equal(empty?.range, undefined);
    assert.equal((await readAll(empty!.body)).length, 0);
    await rejectsWith(driver.get("empty", { offset: 1 }), "range", /past the end/);
  });

  it("says null, false or nothing for a missing key", async () => {
    fresh();
    const driver = driverOf(fake.url);
    assert.equal(await driver.get("nothing"), null);
    assert.equal(await driver.head("nothing"), null);
    assert.equal(await driver.copy("nothing", "else"), false);
    await driver.delete("nothing");
    assert.equal(await driver.copy("nothing", "nothing"), false);
  });

  it("refuses to replace an object with ifNoneMatch, by its HEAD and by S3's 412", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("once", encoder.encode("first")));
    const again = putOf("once", encoder.encode("second"), { ifNoneMatch: true });
    await rejectsWith(driver.put(again), "exists", /PutObject: an object has the key/);
    assert.equal(fake.count("PutObject"), 1);
    // Written between the HEAD and the PUT: S3's own If-None-Match refuses it.
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "HeadObject") return false;
      res.writeHead(404).end();
      return true;
    };
    await rejectsWith(driver.put(again), "exists", /an object has the key/);
    assert.equal(fake.calls.at(-1)?.headers["if-none-match"], "*");
    const stored = fake.buckets.get("bucket")!.get("once")!;
    assert.equal(new TextDecoder().decode(stored.bytes), "first");
  });

  it("says the outcome is unknown, not exists, when S3's 412 may answer its own earlier try", async () => {
    fresh();
    const driver = driverOf(fake.url);
    // The first PUT is written, then answered 500 (S3's "internal error", which may come after the
    // write): the second, sent again, finds the object.
    let tries = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "PutObject" || tries++ > 0) return false;
      fake.buckets.get("bucket")!.set("lost-answer", {
        bytes: encoder.encode("mine"),
        contentType: "text/plain",
        metadata: {},
        etag: '"e"',
        lastModified: new Date(),
      });
      sendError(res, 500, "InternalError", "We encountered an internal error.");
      return true;
    };
    const put = putOf("lost-answer", encoder.encode("mine"), { ifNoneMatch: true });
    const fault = await rejectsWith(driver.put(put), "unavailable", /PutObject: /);
    assert.match(fault.message, /an earlier try may have written it/);
    assert.equal(fake.count("PutObject"), 2);
  });

  it("says exists at a 412 after tries S3 refused before doing anything (409, 503)", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("raced", encoder.encode("theirs")));
    const refusals = [
      [409, "ConditionalRequestConflict"],
      [503, "SlowDown"],
    ] as const;
    let puts = 0;
    fake.intercept = (call, _req, res) => {
      // Written by another between this HEAD and the PUT.
      if (call.operation === "HeadObject") return void res.writeHead(404).end(), true;
      const refusal = refusals[puts++];
      if (call.operation !== "PutObject" || refusal === undefined) return false;
      sendError(res, refusal[0], refusal[1], "Try again.");
      return true;
    };
    const put = putOf("raced", encoder.encode("mine"), { ifNoneMatch: true });
    await rejectsWith(driver.put(put), "exists", /PutObject: an object has the key/);
    assert.equal(fake.count("PutObject"), 4);
  });

  it("lists by pages, entities and references decoded, the prefix taken off, folders left out", async () => {
    fresh();
    fake.listingReferences = true;
    const driver = driverOf(fake.url, { prefix: "app/" });
    const keys = ["a&b", "a<b>", `q"u'o`, "é/ü", "中文", "😀", "plain"];
    for (const key of keys) await driver.put(putOf(key, encoder.encode(key)));
    await driverOf(fake.url).put(putOf("other", encoder.encode("not listed")));
    // A folder marker, as consoles make and S3Proxy's filesystem store lists.
    const objects = fake.buckets.get("bucket")!;
    objects.set("app/folder/", { ...objects.get("app/plain")!, bytes: new Uint8Array(0) });
    const seen: string[] = [];
    let start: string | undefined;
    let pages = 0;
    do {
      const page = await driver.list("", 2, start);
      pages++;
      for (const object of page.objects) {
        seen.push(object.key);
        assert.equal(object.size, encoder.encode(object.key).length);
        assert.match(object.etag, /^"[0-9a-f]{32}"$/);
        assert.ok(object.lastModified.getTime() > 0);
      }
      start = page.next;
    } while (start !== undefined);
    const bytes = (key: string) => Buffer.from(key);
    assert.deepEqual(seen, [...keys].sort((a, b) => Buffer.compare(bytes(a), bytes(b))));
    assert.equal(pages, 4);
    // A page of a folder alone is an empty page that goes on: the core reads past it.
    const single: string[] = [];
    let empty = 0;
    start = undefined;
    do {
      const page = await driver.list("", 1, start);
      if (page.objects.length === 0) empty++;
      single.push(...page.objects.map((object) => object.key));
      start = page.next;
    } while (start !== undefined);
    assert.deepEqual(single, seen);
    assert.equal(empty, 1);
    assert.deepEqual((await driver.list("é/", 10)).objects.map((o) => o.key), ["é/ü"]);
    assert.deepEqual(fake.refused, []);
  });

  it("checks the bucket, and says unavailable for a missing one", async () => {
    fresh();
    await driverOf(fake.url).check();
    const missing = driverOf(fake.url, { bucket: "missing" });
    await rejectsWith(missing.check(), "unavailable", /HeadBucket: no bucket "missing" at 127/);
    await rejectsWith(
      missing.get("k"),
      "unavailable",
      /GetObject: no bucket "missing".*NoSuchBucket/,
    );
    await rejectsWith(missing.list("", 10), "unavailable", /no bucket/);
    await rejectsWith(missing.delete("k"), "unavailable", /no bucket/);
    await rejectsWith(missing.copy("a", "b"), "unavailable", /no bucket/);
  });

  it("sends again after 503s and 429s, and succeeds", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("retried", encoder.encode("fine")));
    let refusals = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "GetObject" || refusals >= 2) return false;
      if (refusals++ === 0) sendError(res, 503, "SlowDown", "Please reduce your request rate.");
      else sendError(res, 429, "TooManyRequests");
      return true;
    };
    const started = performance.now();
    const read = await driver.get("retried");
    assert.equal(new TextDecoder().decode(await readAll(read!.body)), "fine");
    assert.equal(fake.count("GetObject"), 3);
    // 250 ms, then 500 ms give or take 200.
    assert.ok(performance.now() - started >= 500, "waited between tries");
  });

  it("refuses a 206 longer than the range asked for: it would not fit the response planned on it", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("long-range", encoder.encode("0123456789")));
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "GetObject") return false;
      res.writeHead(206, {
        "content-range": "bytes 0-9/10",
        "content-length": "10",
        etag: '"e"',
        "last-modified": new Date().toUTCString(),
      });
      res.end("0123456789");
      return true;
    };
    await rejectsWith(
      driver.get("long-range", { offset: 0, length: 2 }),
      "invalid",
      /Content-Range of "bytes 0-9\/10"/,
    );
  });

  it("says denied at a 403, at once, S3's words shown and no secret", async () => {
    fresh();
    const driver = driverOf(fake.url);
    fake.intercept = (_call, _req, res) => {
      const echoed = `Access Denied for ${FAKE_CREDENTIALS.accessKeyId} ` +
        `${FAKE_CREDENTIALS.secretAccessKey}\n\u001b[31m`;
      sendError(res, 403, "AccessDenied", echoed);
      return true;
    };
    const fault = await rejectsWith(
      driver.put(putOf("k", encoder.encode("x"))),
      "denied",
      /^PutObject: S3 answered 403 AccessDenied: "Access Denied for \*\*\* \*\*\*\\n\\u001b\[31m"$/,
    );
    assert.ok(!fault.message.includes("\n"));
    assert.equal(fake.count("PutObject"), 1);
    await rejectsWith(driver.head("k"), "denied", /HeadObject: S3 answered 403$/);
    await rejectsWith(driver.list("", 1), "denied", /ListObjectsV2: S3 answered 403 AccessDenied/);
  });

  it("says invalid at another 4xx or a redirect, at once", async () => {
    fresh();
    const driver = driverOf(fake.url);
    fake.intercept = (call, _req, res) => {
      if (call.operation === "GetObject") {
        res.writeHead(301, { location: "https://elsewhere.example/" });
        res.end(
          "<Error><Code>PermanentRedirect</Code><Message>Use the other endpoint</Message></Error>",
        );
      } else sendError(res, 400, "InvalidArgument", "x".repeat(1000));
      return true;
    };
    await rejectsWith(driver.get("k"), "invalid", /301 PermanentRedirect.*another region/);
    await rejectsWith(
      driver.delete("k"),
      "invalid",
      /DeleteObject: S3 answered 400 InvalidArgument: "x+\.\.\. \(1000 characters\)$/,
    );
    assert.equal(fake.count("DeleteObject"), 1);
  });

  it("reads a copy's <Error> in its 200: sent again when it says not now, else invalid", async () => {
    fresh();
    const driver = driverOf(fake.url);
    await driver.put(putOf("from", encoder.encode("x")));
    let copies = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "CopyObject") return false;
      const code = copies++ === 0 ? "InternalError" : copies < 3 ? "InvalidRequest" : "";
      if (code === "") return false;
      res.writeHead(200, { "content-type": "application/xml" });
      res.end(`<?xml version="1.0"?>\n\n<Error><Code>${code}</Code><Message>m</Message></Error>`);
      return true;
    };
    await rejectsWith(
      driver.copy("from", "to"),
      "invalid",
      /CopyObject: S3 answered 200 InvalidRequest: "m"/,
    );
    assert.equal(copies, 2);
    assert.equal(await driver.copy("from", "to"), true);
  });

  it("gives up on a host that never answers, within its tries' time limits", async () => {
    const silent = await startSilentHost();
    try {
      const driver = driverOf(silent.url, { timeoutMs: 300 });
      const started = performance.now();
      await rejectsWith(
        driver.get("k"),
        "unavailable",
        /GetObject: S3 sent no answer within 300 ms \(5 tries\)/,
      );
      const took = performance.now() - started;
      // 5 tries of 300 ms, and waits of 250, 500, 1000, 2000 ms, give or take 100 ms each grown.
      assert.ok(took >= 5 * 300 + 250 + 300 + 600 + 1200 - 50, `${took} ms`);
      assert.ok(took < 5 * 300 + 250 + 700 + 1400 + 2800 + 2_000, `${took} ms`);
      assert.equal(silent.connections(), 5);
    } finally {
      await silent.close();
    }
  });

  it("stops a write at once when the caller gives up", async () => {
    const silent = await startSilentHost();
    try {
      const driver = driverOf(silent.url, { timeoutMs: 10_000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error("enough")), 200);
      const started = performance.now();
      const body = putOf("k", encoder.encode("x"), { signal: controller.signal });
      await rejectsWith(driver.put(body), "aborted", /PutObject: given up by the caller/);
      assert.ok(performance.now() - started < 2_000);
    } finally {
      await silent.close();
    }
  });

  it("bounds the wait for the answer's head, not its body's download", async () => {
    fresh();
    const driver = driverOf(fake.url, { timeoutMs: 300 });
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "GetObject") return false;
      res.writeHead(200, {
        "content-length": "3",
        etag: '"e"',
        "last-modified": new Date().toUTCString(),
      });
      res.flushHeaders();
      let sent = 0;
      const timer = setInterval(() => {
        res.write("x");
        if (++sent === 3) {
          clearInterval(timer);
          res.end();
        }
      }, 250);
      return true;
    };
    const slow = await driver.get("slow");
    assert.equal(new TextDecoder().decode(await readAll(slow!.body)), "xxx");
  });

  it("sends again a request whose answer it reads itself when that answer stalls", async () => {
    fresh();
    const driver = driverOf(fake.url, { timeoutMs: 300 });
    await driver.put(putOf("listed", encoder.encode("x")));
    let stalled = 0;
    fake.intercept = (call, _req, res) => {
      if (call.operation !== "ListObjectsV2" || stalled++ > 0) return false;
      res.writeHead(200, { "content-type": "application/xml" });
      res.write("<ListBucketResult>");
      return true;
    };
    const page = await driver.list("listed", 10);
    assert.deepEqual(page.objects.map((object) => object.key), ["listed"]);
    assert.equal(fake.count("ListObjectsV2"), 2);
  });
});

describe("S3Settings", () => {
  it("refuses what no request could be sent with, naming it and no secret", () => {
    const base = {
      bucket: "b-1",
      region: "us-east-1",
      pathStyle: false,
      ...FAKE_CREDENTIALS,
      prefix: "",
      timeoutMs: 1000,
    };
    const wrong: [Partial<S3Settings>, RegExp][] = [
      [{ bucket: "Upper_Case" }, /bucket is no bucket name, got "Upper_Case"/],
      [{ bucket: "" }, /bucket/],
      [{ region: "us east" }, /region/],
      [{ prefix: "app" }, /prefix is "" or ends with "\/", got "app"/],
      [{ prefix: "a//" }, /prefix "a\/\/": a prefix has no empty segment/],
      [{ prefix: "../" }, /prefix/],
      [{ timeoutMs: 0 }, /timeoutMs/],
      [{ endpoint: "ftp://host" }, /endpoint/],
      [{ endpoint: "https://host/?q=1" }, /endpoint/],
      [{ endpoint: "https://user:pw@host" }, /endpoint/],
      [{ endpoint: "https://host/a b" }, /endpoint/],
      [{ secretAccessKey: "" }, /secretAccessKey is a string, not empty/],
    ];
    for (const [change, message] of wrong) {
      assert.throws(() => new S3Driver({ ...base, ...change }), (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(error.message, /^S3Settings: /);
        assert.match(error.message, message);
        for (const secret of SECRETS) assert.ok(!error.message.includes(secret));
        return true;
      });
    }
    assert.equal(new S3Driver({ ...base, bucket: "Legacy_Bucket", pathStyle: true }).kind, "s3");
  });

  it("signs URLs for 1 s to 7 days, on the bucket's host or path", async () => {
    const hosted = new S3Driver({
      bucket: "b-1",
      region: "eu-west-1",
      pathStyle: false,
      ...FAKE_CREDENTIALS,
      sessionToken: "token/with+chars=",
      prefix: "p/",
      timeoutMs: 1000,
    });
    const url = new URL(await hosted.signedUrl("a b", "PUT", 604_800));
    assert.equal(url.origin, "https://b-1.s3.eu-west-1.amazonaws.com");
    assert.equal(url.pathname, "/p/a%20b");
    assert.equal(url.searchParams.get("X-Amz-Expires"), "604800");
    assert.equal(url.searchParams.get("X-Amz-SignedHeaders"), "host");
    assert.equal(url.searchParams.get("X-Amz-Security-Token"), "token/with+chars=");
    assert.match(url.searchParams.get("X-Amz-Signature") ?? "", /^[0-9a-f]{64}$/);
    const path = driverOf("http://127.0.0.1:9/base");
    assert.equal(new URL(await path.signedUrl("k", "GET", 1)).pathname, "/base/bucket/k");
    for (const expires of [0, 604_801, 1.5, Number.NaN]) {
      await rejectsWith(path.signedUrl("k", "GET", expires), "invalid", /1 to 604800/);
    }
  });
});
