// One broadcast message as it travels between replicas (Redis pub/sub, a Kafka record, or the
// process itself): the JSON text `{"channel":...,"data":...}`. Channel names and payloads come
// from clients in practice, so what is read back is checked, never trusted: a message another
// writer put on the channel or topic that is not one is dropped, not delivered half-read. What
// subscribers get is the data's JSON text, which holds no line break and no lone surrogate
// (JSON.stringify escapes both), so it fits one SSE `data:` line and one WebSocket text message
// whatever the publisher gave.

/** The longest channel name, in UTF-16 code units: a name is held once per subscriber. */
export const MAX_CHANNEL_LENGTH = 1024;

/** A message as subscribers receive it: the JSON text of what was published. */
export interface BroadcastEvent {
  /**
   * The JSON text of the published data (`JSON.parse` gives it back): an `@SseMapping` sends it
   * as the event's `data:` line, a socket as one text message.
   */
  readonly data: string;
}

/** A message read back from the wire: its channel and the event its subscribers get. */
export interface ReceivedMessage {
  readonly channel: string;
  readonly event: BroadcastEvent;
}

/**
 * The channel checked: a text of 1 to {@linkcode MAX_CHANNEL_LENGTH} code units. Throws a
 * `TypeError` naming `who` otherwise.
 */
export function checkChannel(channel: unknown, who: string): string {
  if (!isChannel(channel)) {
    throw new TypeError(
      `${who}: a channel is a text of 1 to ${MAX_CHANNEL_LENGTH} characters, got ${
        typeof channel === "string" ? `${channel.length} characters` : typeof channel
      }`,
    );
  }
  return channel;
}

/**
 * The wire text of `data` published on `channel`. Throws a `TypeError` naming `who` for data that
 * has no JSON form (`undefined`, a function, a symbol, a bigint, a cycle).
 */
export function encodeMessage(channel: string, data: unknown, who: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (error) {
    throw new TypeError(
      `${who}: the data published on a channel must have a JSON form: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
  if (json === undefined) {
    throw new TypeError(
      `${who}: the data published on a channel must have a JSON form, got ${typeof data}`,
    );
  }
  return `{"channel":${JSON.stringify(channel)},"data":${json}}`;
}

/**
 * The message a wire text holds; `undefined` when it holds none (not JSON, not an object with a
 * channel and data, a channel out of bounds). Never throws.
 */
export function decodeMessage(text: string): ReceivedMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { channel, data } = value as { channel?: unknown; data?: unknown };
  if (!isChannel(channel) || !Object.hasOwn(value, "data")) return undefined;
  return { channel, event: { data: JSON.stringify(data) } };
}

function isChannel(channel: unknown): channel is string {
  return typeof channel === "string" && channel.length > 0 && channel.length <= MAX_CHANNEL_LENGTH;
}
