// The wire form of a broadcast message, and what a subscriber gets of it: whatever channel name
// and payload a client got a publisher to send (every UTF-16 code unit, line breaks, NUL, lone
// surrogates, a megabyte), it reads back as it was sent, fits one SSE `data:` line, and a log line
// naming its channel holds no line break or control character.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkChannel,
  decodeMessage,
  encodeMessage,
  MAX_CHANNEL_LENGTH,
} from "../../src/broadcast/broadcast_message.ts";
import { shownChannel } from "../../src/broadcast/broadcaster.ts";
import { sseFrame } from "../../src/web/sse_frame.ts";
import { propertyOptions } from "../property.ts";

// Any UTF-16 code unit, lone surrogates and every control character included.
const anyText = (minLength = 0, maxLength = 40) =>
  fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    minLength,
    maxLength,
  });
const channel = anyText(1, 40);
// JSON data whose texts are hostile too.
const data = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyText(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(anyText(0, 8), tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("a broadcast message on the wire", () => {
  it("reads back with its channel and its data's JSON text, whatever they hold", () => {
    fc.assert(
      fc.property(channel, data, (name, value) => {
        const read = decodeMessage(encodeMessage(name, value, "test"));
        assert.equal(read?.channel, name);
        assert.equal(read?.event.data, JSON.stringify(value));
        assert.deepEqual(JSON.parse(read.event.data), JSON.parse(JSON.stringify(value)));
      }),
      propertyOptions(),
    );
  });

  it("gives subscribers a text that is one SSE data line, which an EventSource reads back whole", () => {
    fc.assert(
      fc.property(channel, data, (name, value) => {
        const { event } = decodeMessage(encodeMessage(name, value, "test"))!;
        assert.doesNotMatch(event.data, /[\r\n\0]/);
        const frame = sseFrame(event);
        assert.equal(frame, `data: ${event.data}\n\n`);
      }),
      propertyOptions(),
    );
  });

  it("holds a megabyte of every code unit in one data line", () => {
    let text = "";
    for (let c = 0; text.length < 1_000_000; c = (c + 1) % 0x10000) text += String.fromCharCode(c);
    const { event } = decodeMessage(encodeMessage("big", text, "test"))!;
    assert.equal(JSON.parse(event.data), text);
    const frame = sseFrame(event);
    assert.equal(frame.split("\n").length, 3); // one data line, then the blank line
  });

  it("never throws on what another writer put on the channel or topic, and takes only messages", () => {
    fc.assert(
      fc.property(anyText(0, 80), (text) => {
        const read = decodeMessage(text);
        if (read !== undefined) assert.equal(typeof read.channel, "string");
      }),
      propertyOptions(),
    );
    for (const text of ["", "null", "[]", '"x"', '{"channel":"a"}', '{"data":1}', "{", "\u0000"]) {
      assert.equal(decodeMessage(text), undefined, text);
    }
    assert.equal(decodeMessage(`{"channel":"","data":1}`), undefined);
    const long = JSON.stringify("x".repeat(MAX_CHANNEL_LENGTH + 1));
    assert.equal(decodeMessage(`{"channel":${long},"data":1}`), undefined);
    assert.deepEqual(decodeMessage('{"channel":"a","data":null}'), {
      channel: "a",
      event: { data: "null" },
    });
  });

  it("names a channel in a log line with no line break or control character", () => {
    fc.assert(
      fc.property(channel, (name) => {
        // deno-lint-ignore no-control-regex
        assert.doesNotMatch(shownChannel(name), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
      }),
      propertyOptions(),
    );
    assert.equal(shownChannel('a\r\nb"'), '"a\\r\\nb\\""');
  });

  it("refuses a channel that is no text of 1 to 1,024 characters, and data with no JSON form", () => {
    assert.equal(checkChannel("room:1", "test"), "room:1");
    for (const bad of ["", "x".repeat(MAX_CHANNEL_LENGTH + 1), 7, null, undefined]) {
      assert.throws(() => checkChannel(bad, "Broadcaster"), /Broadcaster: a channel is a text/);
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const bad of [undefined, () => 1, Symbol("s"), 1n, cycle]) {
      assert.throws(() => encodeMessage("a", bad, "Broadcaster"), /must have a JSON form/);
    }
  });
});
