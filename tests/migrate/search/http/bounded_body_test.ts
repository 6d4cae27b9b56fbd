// BoundedBody against a reference: the bytes given, in any chunking, whole when within the bound
// chosen from the first two of them, and the bound's error when past it; held in one copy.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { BoundedBody } from "../../../../src/migrate/search/http/bounded_body.ts";
import type { BodyLimit } from "../../../../src/migrate/search/http/transport.ts";
import { propertyOptions } from "../../../property.ts";

/** `bytes` cut at `cuts` (positions, any order, repeats make empty chunks). */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [0, ...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length];
  return at.slice(1).map((end, i) => bytes.subarray(at[i], end));
}

describe("BoundedBody", () => {
  it("gives the bytes whole within the bound, the bound's error past it, in any chunking", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.nat(400), { maxLength: 12 }),
        fc.nat(320),
        fc.nat(320),
        fc.option(fc.nat(400), { nil: undefined }),
        (bytes, cuts, small, large, declared) => {
          const asked: number[][] = [];
          // The bound depends on the first two bytes, as the compressed bound does.
          const limit: BodyLimit = (_encoding, first) => {
            asked.push([...first.subarray(0, 2)]);
            const most = first.length >= 2 && first[0] === 0x1f ? small : large;
            return { most, over: () => new RangeError(`over ${most}`) };
          };
          const body = new BoundedBody(limit, "gzip", declared);
          let failed: Error | undefined;
          for (const chunk of chunked(bytes, cuts)) {
            failed = body.add(new Uint8Array(chunk));
            if (failed !== undefined) break;
          }
          const outcome = failed ?? body.bytes();
          const most = bytes.length >= 2 && bytes[0] === 0x1f ? small : large;
          assert.equal(asked.length, 1, "the bound is chosen once");
          assert.deepEqual(asked[0], [...bytes.subarray(0, 2)], "from the first two bytes");
          if (bytes.length > most) {
            assert.ok(outcome instanceof RangeError, `${bytes.length} bytes over ${most}`);
            assert.equal(outcome.message, `over ${most}`);
          } else {
            assert.ok(outcome instanceof Uint8Array, String(outcome));
            assert.deepEqual([...outcome], [...bytes]);
          }
        },
      ),
      propertyOptions(),
    );
  });

  it("holds one copy of the bytes, not the buffers the chunks were views on", () => {
    const body = new BoundedBody(() => ({ most: 1_000_000, over: () => new Error("over") }));
    for (let i = 0; i < 20_000; i++) {
      // Each byte a view on a 64 KiB buffer of its own, as Deno's fetch hands a chunked answer.
      assert.equal(body.add(new Uint8Array(65_536).fill(i % 256).subarray(0, 1)), undefined);
    }
    const whole = body.bytes();
    assert.ok(whole instanceof Uint8Array);
    assert.equal(whole.length, 20_000);
    assert.equal(whole[19_999], 19_999 % 256);
    assert.ok(whole.buffer.byteLength <= 2 * 20_000 + 16 * 1024, `${whole.buffer.byteLength}`);
  });

  it("reserves no more than 1 MiB for a declared length the host may not keep to", () => {
    const body = new BoundedBody(
      () => ({ most: Number.MAX_SAFE_INTEGER, over: () => new Error("over") }),
      undefined,
      500 * 1024 * 1024,
    );
    body.add(new Uint8Array([1, 2]));
    body.add(new Uint8Array([3]));
    const whole = body.bytes();
    assert.ok(whole instanceof Uint8Array);
    assert.deepEqual([...whole], [1, 2, 3]);
    assert.equal(whole.buffer.byteLength, 1024 * 1024);
  });

  it("holds an answer in one chunk as it came, and copies it once a second comes", () => {
    const unbounded = () => ({ most: Number.MAX_SAFE_INTEGER, over: () => new Error("over") });
    const first = new Uint8Array([1, 2, 3]);
    const one = new BoundedBody(unbounded, undefined, 3);
    one.add(first);
    assert.equal(one.bytes(), first);
    const two = new BoundedBody(unbounded);
    two.add(first);
    two.add(new Uint8Array([4]));
    first.fill(0);
    const whole = two.bytes();
    assert.ok(whole instanceof Uint8Array);
    assert.deepEqual([...whole], [1, 2, 3, 4]);
  });
});
