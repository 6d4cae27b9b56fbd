// A job's state in its SQS message's attributes, written and read. Pure: the SDK's types only.
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";

/** Thaw's own attributes of a message: another sender's are not carried on (SQS takes ten). */
export function thawAttributes(message: Message): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).filter(([name]) => name.startsWith("thaw-")),
  );
}

/** A text attribute. */
export function text(value: string): MessageAttributeValue {
  return { DataType: "String", StringValue: value };
}

/** A number attribute. */
export function number(value: number): MessageAttributeValue {
  return { DataType: "Number", StringValue: String(value) };
}

/**
 * `value` as SQS takes it in an attribute (tab, line breaks, and from U+0020 on, but lone
 * surrogates and U+FFFE, U+FFFF): every other character becomes U+FFFD. An error that held one
 * would otherwise fail the send of its dead job, again and again.
 */
export function attributeText(value: string): string {
  return value.replace(
    // deno-lint-ignore no-control-regex -- the control characters are what it replaces
    /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    "\uFFFD",
  );
}

/** The text attribute `name` of `message`, if any. */
export function textOf(message: Message, name: string): string | undefined {
  return message.MessageAttributes?.[name]?.StringValue;
}

/** A number attribute, or `undefined` when absent or not a number (a message Thaw did not send). */
export function numberOf(message: Message, name: string): number | undefined {
  const raw = textOf(message, name);
  const value = Number(raw);
  return raw === undefined || raw.trim() === "" || !Number.isFinite(value) ? undefined : value;
}

/** A job's state as its message's Thaw attributes hold it. */
export interface ThawState {
  /** The runs counted before this message. */
  readonly runs: number;
  /** When it is due (ms since the epoch), if later than its message's delay. */
  readonly due: number | undefined;
  /** How many runs it was enqueued with, when not its handler's. */
  readonly attempts: number | undefined;
  /** When it was first enqueued (ms since the epoch). */
  readonly enqueued: number | undefined;
}

/** The latest time a Date holds, in ms since the epoch. */
export const MAX_TIME = 8.64e15;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The job's id: its `thaw-id` when that is one Thaw makes (a UUID), else the message's own id.
 * Another sender's text never reaches a log line, a span or the actuator as an id.
 */
export function jobId(message: Message): string {
  const id = textOf(message, "thaw-id");
  return id !== undefined && UUID.test(id) ? id : message.MessageId ?? "";
}

/** A time attribute (ms since the epoch) a Date holds, or `undefined`. */
export function timeOf(message: Message, name: string): number | undefined {
  const value = numberOf(message, name);
  return value !== undefined && value >= 0 && value <= MAX_TIME ? value : undefined;
}

// Each attribute's values, as Thaw writes them: anything else came from another sender, and a
// job read from it could never end (a negative run count is never past its attempts, a due time
// past every Date is sent again every 15 minutes for ever).
const READ: Readonly<
  Record<keyof ThawState, { name: string; min: number; max: number; integer: boolean }>
> = {
  runs: { name: "thaw-runs", min: 0, max: Number.MAX_SAFE_INTEGER, integer: true },
  due: { name: "thaw-due", min: 0, max: MAX_TIME, integer: false },
  attempts: { name: "thaw-attempts", min: 1, max: 2 ** 31 - 1, integer: true },
  enqueued: { name: "thaw-enqueued", min: 0, max: MAX_TIME, integer: false },
};

/**
 * The job state `message` holds, or why it is not a state Thaw wrote: the attribute, and its value
 * (at most 40 characters of it, as JSON).
 */
export function thawState(message: Message): ThawState | string {
  const values = new Map<keyof ThawState, number | undefined>();
  for (const [key, { name, min, max, integer }] of Object.entries(READ)) {
    const raw = textOf(message, name);
    const value = numberOf(message, name);
    if (
      raw !== undefined &&
      (value === undefined || value < min || value > max || (integer && !Number.isInteger(value)))
    ) {
      return `its attribute ${name} (${JSON.stringify(raw.slice(0, 40))}) is not one Thaw writes`;
    }
    values.set(key as keyof ThawState, value);
  }
  return {
    runs: values.get("runs") ?? 0,
    due: values.get("due"),
    attempts: values.get("attempts"),
    enqueued: values.get("enqueued"),
  };
}
