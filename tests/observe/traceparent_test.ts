// W3C's `traceparent` as text: every valid span context written reads back as it was (its flags'
// sampled bit, its tracestate), and any text that is not a valid version-00 `traceparent` (any
// code unit, any length, an all-zero id) reads back as none, never a throw.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import fc from "fast-check";
import { spanContextOf, traceparentOf } from "../../src/observe/traceparent.ts";
import { propertyOptions } from "../property.ts";

const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));
const valid = (length: number) => hex(length).filter((id) => /[1-9a-f]/.test(id));
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

describe("traceparent", () => {
  it("reads back every valid span context it wrote, sampled or not", () => {
    fc.assert(
      fc.property(valid(32), valid(16), fc.nat(255), (traceId, spanId, traceFlags) => {
        const text = traceparentOf({ traceId, spanId, traceFlags });
        assert.match(text, TRACEPARENT);
        assert.deepEqual(spanContextOf(api, text), {
          traceId,
          spanId,
          traceFlags: traceFlags & 1,
          isRemote: true,
        });
      }),
      propertyOptions(),
    );
  });

  it("keeps a tracestate of 512 characters at most, and drops a longer one", () => {
    const text = "00-" + "1".repeat(32) + "-" + "2".repeat(16) + "-01";
    // Members of 100 characters at most (W3C bounds a value at 256): 512 in all.
    const state = ["a", "b", "c", "d", "e"].map((key) => `${key}=${"v".repeat(98)}`).join(",")
      .concat(",f=vvvvv");
    assert.equal(state.length, 512);
    assert.equal(spanContextOf(api, text, state)?.traceState?.serialize(), state);
    assert.equal(spanContextOf(api, text, state + "v")?.traceState, undefined);
    assert.equal(spanContextOf(api, text, state + "v")?.traceId, "1".repeat(32));
  });

  it("reads none from an all-zero id, and from any text that is not one", () => {
    assert.equal(spanContextOf(api, `00-${"0".repeat(32)}-${"1".repeat(16)}-01`), undefined);
    assert.equal(spanContextOf(api, `00-${"1".repeat(32)}-${"0".repeat(16)}-01`), undefined);
    assert.equal(spanContextOf(api, undefined), undefined);
    const anyText = fc.oneof(
      fc.string({ unit: "binary", maxLength: 80 }),
      // Near misses: a valid one with one code unit put in, changed or removed.
      fc.tuple(
        valid(32),
        valid(16),
        hex(2),
        fc.nat(54),
        fc.string({ unit: "binary", maxLength: 2 }),
      )
        .map(([t, s, f, at, put]) => {
          const text = `00-${t}-${s}-${f}`;
          return text.slice(0, at) + put + text.slice(at + 1);
        }),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        const read = spanContextOf(api, text);
        if (read !== undefined) {
          assert.match(text.trim(), TRACEPARENT);
          assert.ok(api.isSpanContextValid(read));
        }
      }),
      propertyOptions(300),
    );
  });
});
