// A job's state in its SQS message's attributes, written and read. Pure: the SDK's types only.
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";

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
