// The access log, with the logging feature (`logging.access.enabled`): one entry per request, and
// one per event stream or WebSocket at its end, to the logger `thaw.access`. Plain lines are the
// entry as one line of JSON (as the access log wrote before it moved here); structured ones are
// the feature's line of its shape, the entry's fields named as that shape names them. Every text
// is masked of the configuration's secrets, as every line of the feature is.
import type { FeatureFactory } from "../app_feature.ts";
import { type Mask, noMask } from "../config/secrets_mask.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import {
  type AccessLogEntry,
  accessLogLine,
  accessLogObserver,
  streamAccessLog,
  type StreamLogEntry,
} from "../observe/access_log.ts";
import { logStreams } from "../observe/open_streams.ts";
import { ACCESS_LOGGER, type LogWriter } from "./log_writer.ts";

/**
 * The access log of the app whose container is `context`, when `logging.access.enabled`: its
 * streams' entries from now on, its requests' once the features are folded (the factory).
 */
export function accessLog(
  settings: ThawSettings,
  context: object,
  writer: LogWriter,
): FeatureFactory | undefined {
  if (!settings.get("logging.access.enabled")) return undefined;
  const write = (entry: AccessLogEntry | StreamLogEntry): void => {
    const format = writer.format;
    if (format === undefined) {
      writer.write(ACCESS_LOGGER, "INFO", accessLogLine(maskedEntry(entry, writer.mask)), []);
    } else {
      const message = `${entry.method} ${entry.path} ${entry.status}`;
      writer.write(ACCESS_LOGGER, "INFO", message, [
        defined(format === "ecs" ? ecsFields(entry) : { ...entry }),
      ]);
    }
  };
  logStreams(context, streamAccessLog(write));
  // Read here, once every entry point the app imports has declared its keys: `listen`'s and the
  // actuator's modules declare it.
  return ({ settings }) => ({
    observers: [accessLogObserver(write, settings.get("server.forward-headers-strategy"))],
  });
}

/**
 * An entry's fields as Elastic Common Schema names them (`event.duration` in nanoseconds, as ECS
 * has it); a stream's own under `thaw.stream`. What is unknown is left out.
 */
export function ecsFields(entry: AccessLogEntry | StreamLogEntry): Record<string, unknown> {
  const stream = "stream" in entry ? entry : undefined;
  return defined({
    "event.start": entry.time,
    "event.duration": Math.round(entry.duration_ms * 1e6),
    "http.request.method": entry.method,
    "http.route": entry.route,
    "url.path": entry.path,
    "http.response.status_code": entry.status,
    "http.response.body.bytes": entry.bytes,
    "trace.id": entry.trace_id,
    "client.address": entry.client_address,
    "user_agent.original": entry.user_agent,
    "thaw.stream.kind": stream?.stream,
    "thaw.stream.sent": stream?.sent,
    "thaw.stream.received": stream?.received,
    "thaw.stream.bytes_received": stream?.bytes_received,
  });
}

// The entry with each text masked: its keys are the access log's own, and its values flat, so
// none of a parsed body's care (a `__proto__` key, nesting) is needed, nor paid for on every
// request.
function maskedEntry<T extends AccessLogEntry>(entry: T, mask: Mask): T {
  if (mask === noMask) return entry;
  const out: Record<string, unknown> = { ...entry } as Record<string, unknown>;
  for (const key in out) {
    const value = out[key];
    if (typeof value === "string") out[key] = mask(value);
  }
  return out as T;
}

// What is unknown is left out of a line, as JSON leaves it out of a plain one.
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
  return fields;
}
