import assert from "node:assert/strict";
import { Buffer, constants } from "node:buffer";
import { deflateSync, gzipSync } from "node:zlib";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  bodyLimit,
  boundsOf,
  compressedCeiling,
  decoded,
  stillEncoded,
  wholeAnswer,
} from "../../src/search/answer_bounds.ts";
import { propertyOptions } from "../property.ts";

const tooLarge = (bound: string, bytes: number) => new RangeError(`${bound} ${bytes}`);

describe("stillEncoded", () => {
  it("property: JSON text is never taken for gzip or deflate, and their output always is", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.uint8Array({ maxLength: 64 }), (value, raw) => {
        const json = Buffer.from(JSON.stringify(value) ?? "null");
        assert.equal(stillEncoded(json, "gzip"), false);
        assert.equal(stillEncoded(json, "deflate"), false);
        assert.equal(stillEncoded(gzipSync(raw), "gzip"), true);
        assert.equal(stillEncoded(gzipSync(raw), "x-gzip"), true);
        assert.equal(stillEncoded(deflateSync(raw), "deflate"), true);
        assert.equal(stillEncoded(gzipSync(raw), "br"), false);
      }),
      propertyOptions(),
    );
  });
});

describe("compressedCeiling", () => {
  it("property: gzip and deflate at any level never take more than it says", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200_000 }),
        fc.integer({ min: 0, max: 9 }),
        (raw, level) => {
          const most = compressedCeiling(raw.length);
          assert.ok(gzipSync(raw, { level }).length <= most);
          assert.ok(deflateSync(raw, { level }).length <= most);
        },
      ),
      propertyOptions(30),
    );
  });
});

describe("decoded", () => {
  it("property: gives back what was compressed, and refuses more than the decoded bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 256 }),
        fc.boolean(),
        fc.nat({ max: 300 }),
        async (raw, gzip, most) => {
          const packed = gzip ? gzipSync(raw) : deflateSync(raw);
          const bounds = { decoded: most, compressed: constants.MAX_LENGTH };
          const out = await decoded(packed, gzip ? "gzip" : "deflate", bounds, tooLarge).then(
            (bytes) => bytes,
            (error: Error) => error,
          );
          if (raw.length > most) {
            assert.ok(out instanceof RangeError, `${raw.length} bytes over ${most}`);
            assert.equal(out.message, `maxResponseSize ${most}`);
          } else {
            assert.deepEqual(new Uint8Array(out as Uint8Array), raw);
          }
        },
      ),
      propertyOptions(50),
    );
  });
});

describe("boundsOf", () => {
  it("defaults to what the runtime holds, and takes a whole number of bytes within it", () => {
    assert.deepEqual(boundsOf({}), {
      decoded: constants.MAX_STRING_LENGTH,
      compressed: constants.MAX_LENGTH,
    });
    assert.deepEqual(boundsOf({ maxResponseSize: 10 }), {
      decoded: 10,
      compressed: constants.MAX_LENGTH,
    });
    for (const bad of [-1, 1.5, "10", Number.NaN, constants.MAX_STRING_LENGTH + 1]) {
      assert.throws(
        () => boundsOf({ maxResponseSize: bad }),
        /^TypeError: maxResponseSize must be a whole number of bytes from 0 to \d+, got /,
      );
    }
  });
});

describe("wholeAnswer", () => {
  const limit = bodyLimit(
    { decoded: 1000, compressed: 10 },
    (bound, bytes) => new RangeError(`over ${bound} (${bytes} bytes)`),
  );

  it("reads a body whose Content-Length is two equal values joined, not as over the bound", async () => {
    const response = new Response("{}", { headers: { "content-length": "2, 2" } });
    const answer = await wholeAnswer(response, limit);
    assert.equal(new TextDecoder().decode(answer.body), "{}");
  });

  it("holds bytes still compressed to the compressed bound, their first byte alone in a chunk", async () => {
    const gzipped = gzipSync("x".repeat(500));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(gzipped.subarray(0, 1));
        controller.enqueue(gzipped.subarray(1));
        controller.close();
      },
    });
    const response = new Response(body, { headers: { "content-encoding": "gzip" } });
    await assert.rejects(
      wholeAnswer(response, limit),
      /over maxCompressedResponseSize \(10 bytes\)/,
    );
  });
});
