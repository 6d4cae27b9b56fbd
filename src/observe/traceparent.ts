// W3C Trace Context's `traceparent` as text: what a record's header or a stored job carries from
// the span that made it to the span that handles it. Pure: text from the wire or a table is
// checked before it is trusted.
import type { SpanContext } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// The `tracestate` W3C's Trace Context asks every vendor to pass on whole: a longer one is dropped.
const LONGEST_TRACESTATE = 512;

/** `context` as a version-00 `traceparent`: `00-<trace id>-<span id>-<flags>`, 55 characters. */
export function traceparentOf(context: SpanContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/**
 * The remote span context `traceparent` names (sampled or not as it says, with `tracestate` where
 * it is given and at most 512 characters); none for a malformed or all-zero one.
 */
export function spanContextOf(
  api: OtelApi,
  traceparent: string | undefined,
  tracestate?: string | undefined,
): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const context: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: Number.parseInt(match[3], 16) & 1,
    isRemote: true,
  };
  if (!api.isSpanContextValid(context)) return undefined;
  if (tracestate !== undefined && tracestate.length <= LONGEST_TRACESTATE) {
    return { ...context, traceState: api.createTraceState(tracestate) };
  }
  return context;
}
