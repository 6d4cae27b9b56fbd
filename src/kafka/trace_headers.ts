// The trace context a record carries in W3C's `traceparent` and `tracestate` headers: written by
// the producer's span into each record it sends, read back by the listener's span of that record,
// which is then its child. Pure: anything from the wire is checked before it is trusted.
import { Buffer } from "node:buffer";
import type { SpanContext } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import { spanContextOf, traceparentOf } from "../observe/traceparent.ts";
import type { OutgoingRecord } from "./outgoing_record.ts";

/** A received record's headers, as the client hands them (a `Map` of bytes) or as pairs. */
export type ReceivedHeaders = Iterable<
  readonly [string | Uint8Array, string | Uint8Array | null | undefined]
>;

/**
 * `record` with the span's context in W3C's `traceparent` (and `tracestate`, where it has one), in
 * place of any the app set: the consumer's span is then the child of this send's.
 */
export function withTraceHeaders(record: OutgoingRecord, context: SpanContext): OutgoingRecord {
  const headers: (readonly [string, Uint8Array])[] = record.headers.filter(([name]) =>
    name !== "traceparent" && name !== "tracestate"
  );
  headers.push([
    "traceparent",
    Buffer.from(traceparentOf(context), "latin1"),
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
  return spanContextOf(api, parent, state);
}

const text = (value: string | Uint8Array): string =>
  typeof value === "string" ? value : Buffer.from(value).toString("latin1");
