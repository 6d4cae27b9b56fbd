// The trace context a record carries in W3C's `traceparent` and `tracestate` headers: written by
// the producer's span into each record it sends, read back by the listener's span of that record,
// which is then its child. Pure: anything from the wire is checked before it is trusted.
import { Buffer } from "node:buffer";
import type { SpanContext } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import type { OutgoingRecord } from "./outgoing_record.ts";

/** A received record's headers, as the client hands them (a `Map` of bytes) or as pairs. */
export type ReceivedHeaders = Iterable<
  readonly [string | Uint8Array, string | Uint8Array | null | undefined]
>;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// The `tracestate` W3C's Trace Context asks every vendor to pass on whole: a longer one is dropped.
const LONGEST_TRACESTATE = 512;

/**
 * `record` with the span's context in W3C's `traceparent` (and `tracestate`, where it has one), in
 * place of any the app set: the consumer's span is then the child of this send's.
 */
export function withTraceHeaders(record: OutgoingRecord, context: SpanContext): OutgoingRecord {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  const headers: (readonly [string, Uint8Array])[] = record.headers.filter(([name]) =>
    name !== "traceparent" && name !== "tracestate"
  );
  headers.push([
    "traceparent",
    Buffer.from(`00-${context.traceId}-${context.spanId}-${flags}`, "latin1"),
  ]);
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== "") {
    headers.push(["tracestate", Buffer.from(state, "latin1")]);
  }
  return { ...record, headers };
}

/**
 * The span context a received record's `traceparent` names (remote, sampled or not as it says,
 * with its `tracestate`); none when it has none or a malformed one.
 */
export function creationContext(
  api: OtelApi,
  headers: ReceivedHeaders | undefined,
): SpanContext | undefined {
  if (headers === undefined) return undefined;
  let parent: string | undefined;
  let state: string | undefined;
  for (const [name, value] of headers) {
    if (value === null || value === undefined) continue;
    const key = typeof name === "string" ? name : Buffer.from(name).toString("latin1");
    if (key === "traceparent") parent = text(value);
    else if (key === "tracestate") state = text(value);
  }
  const match = parent === undefined ? null : TRACEPARENT.exec(parent.trim());
  if (match === null) return undefined;
  const context: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: Number.parseInt(match[3], 16) & 1,
    isRemote: true,
  };
  if (!api.isSpanContextValid(context)) return undefined;
  if (state !== undefined && state.length <= LONGEST_TRACESTATE) {
    return { ...context, traceState: api.createTraceState(state) };
  }
  return context;
}

const text = (value: string | Uint8Array): string =>
  typeof value === "string" ? value : Buffer.from(value).toString("latin1");
