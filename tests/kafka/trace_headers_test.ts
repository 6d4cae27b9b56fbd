// The trace context a record carries: every span context written into a record's headers reads
// back as it was (sampled or not, its tracestate), in place of what the app set, and a header that
// is malformed or names no valid context reads back as none.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as api from "@opentelemetry/api";
import fc from "fast-check";
import type { OutgoingRecord } from "../../src/kafka/outgoing_record.ts";
import { creationContext, withTraceHeaders } from "../../src/kafka/trace_headers.ts";
import { propertyOptions } from "../property.ts";

const hex = (length: number) =>
  fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`)).filter((id) => /[1-9a-f]/.test(id));
const state = fc.uniqueArray(
  fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/), fc.stringMatching(/^[A-Za-z0-9]{1,8}$/)),
  { selector: ([key]) => key, maxLength: 4 },
).map((pairs) => pairs.map(([key, value]) => `${key}=${value}`).join(","));
const context = fc.record({
  traceId: hex(32),
  spanId: hex(16),
  traceFlags: fc.nat(255),
  state,
}).map(({ state, ...rest }): api.SpanContext => ({
  ...rest,
  ...(state === "" ? {} : { traceState: api.createTraceState(state) }),
}));
const appHeaders = fc.array(
  fc.tuple(
    fc.constantFrom("traceparent", "tracestate", "app", "id"),
    fc.uint8Array({ maxLength: 8 }),
  ),
  { maxLength: 5 },
);

const record = (headers: OutgoingRecord["headers"]): OutgoingRecord => ({
  topic: "t",
  key: undefined,
  value: undefined,
  headers,
  partition: undefined,
});

describe("trace headers", () => {
  it("read back the context written, in place of the app's, its other headers kept", () => {
    fc.assert(
      fc.property(context, appHeaders, fc.boolean(), (context, headers, asBytes) => {
        const sent = withTraceHeaders(record(headers), context);
        assert.deepEqual(
          sent.headers.slice(0, -1 - (context.traceState === undefined ? 0 : 1)),
          headers.filter(([name]) => name !== "traceparent" && name !== "tracestate"),
        );
        // The client hands received headers as a map of bytes; pairs of text read the same.
        const received = asBytes
          ? new Map(sent.headers.map(([name, value]) => [Buffer.from(name), value]))
          : sent.headers.map(([name, value]) => [name, Buffer.from(value).toString("latin1")]);
        const read = creationContext(api, received as Iterable<[string, string]>);
        assert.deepEqual(
          { ...read, traceState: read?.traceState?.serialize() },
          {
            traceId: context.traceId,
            spanId: context.spanId,
            traceFlags: context.traceFlags & 1,
            isRemote: true,
            traceState: context.traceState?.serialize(),
          },
        );
      }),
      propertyOptions(),
    );
  });

  it("read no context from a missing, malformed or invalid traceparent", () => {
    const read = (value: string | null) => creationContext(api, [["traceparent", value]]);
    assert.equal(creationContext(api, undefined), undefined);
    assert.equal(creationContext(api, [["app", "x"]]), undefined);
    assert.equal(read(null), undefined);
    assert.equal(read("00-abc-def-01"), undefined);
    assert.equal(read(`01-${"a".repeat(32)}-${"b".repeat(16)}-01`), undefined);
    assert.equal(read(`00-${"0".repeat(32)}-${"b".repeat(16)}-01`), undefined);
    assert.equal(read(`00-${"a".repeat(32)}-${"0".repeat(16)}-01`), undefined);
    assert.equal(read(` 00-${"a".repeat(32)}-${"b".repeat(16)}-01 `)?.traceFlags, 1);
  });

  it("drop a tracestate longer than 512 characters", () => {
    const parent = `00-${"a".repeat(32)}-${"b".repeat(16)}-00`;
    const long = `k=${"v".repeat(600)}`;
    const read = creationContext(api, [["traceparent", parent], ["tracestate", long]]);
    assert.equal(read?.traceState, undefined);
    assert.equal(read?.traceFlags, 0);
  });
});
