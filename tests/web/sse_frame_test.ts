// The wire form of one server-sent event: what a browser's EventSource parses back.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HEARTBEAT, isSseEvent, sseFrame } from "../../src/web/sse_frame.ts";

/** The events of a stream as the WHATWG HTML standard's parser reads them. */
function parse(text: string): { event: string; data: string; id?: string; retry?: number }[] {
  const events: { event: string; data: string; id?: string; retry?: number }[] = [];
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  let retry: number | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (data.length > 0) {
        events.push({
          event: event || "message",
          data: data.join("\n"),
          ...(id === undefined ? {} : { id }),
          ...(retry === undefined ? {} : { retry }),
        });
      }
      data = [];
      event = "";
      retry = undefined;
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "event") event = value;
    else if (name === "id" && !value.includes("\0")) id = value;
    else if (name === "retry" && /^\d+$/.test(value)) retry = Number(value);
    else throw new Error(`a field no frame should hold: ${JSON.stringify(line)}`);
  }
  return events;
}

const ALL_BYTES = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i));

describe("sseFrame", () => {
  it("sends a string's data as it is, one data: line per line, whatever ends the lines", () => {
    assert.equal(sseFrame({ data: "hello" }), "data: hello\n\n");
    assert.equal(sseFrame({ data: "a\nb\r\nc\rd" }), "data: a\ndata: b\ndata: c\ndata: d\n\n");
    assert.equal(sseFrame({ data: "" }), "data: \n\n");
    assert.equal(sseFrame({ data: " leading" }), "data:  leading\n\n");
    assert.deepEqual(parse(sseFrame({ data: "x\n\ny" })), [{ event: "message", data: "x\n\ny" }]);
  });

  it("writes event, id and retry, and JSON for data that is not a string", () => {
    assert.equal(
      sseFrame({ data: { n: 1 }, event: "tick", id: "a-1", retry: 3000 }),
      'event: tick\nid: a-1\nretry: 3000\ndata: {"n":1}\n\n',
    );
    assert.equal(sseFrame({ data: 7, id: 42 }), "id: 42\ndata: 7\n\n");
    assert.equal(sseFrame({ data: null }), "data: null\n\n");
  });

  it("sends any other item as JSON data, an object with other keys than an event's included", () => {
    assert.equal(sseFrame({ n: 1 }), 'data: {"n":1}\n\n');
    assert.equal(sseFrame([1, "a\nb"]), 'data: [1,"a\\nb"]\n\n');
    assert.equal(sseFrame("text"), "data: text\n\n");
    assert.equal(sseFrame(3), "data: 3\n\n");
    assert.equal(sseFrame({ data: 1, user: "x" }), 'data: {"data":1,"user":"x"}\n\n');
    assert.equal(sseFrame({ event: "only" }), 'data: {"event":"only"}\n\n');
    assert.equal(
      isSseEvent(
        new (class {
          data = 1;
        })(),
      ),
      false,
    );
  });

  it("carries every byte value of data, and parses back to it", () => {
    for (const c of ALL_BYTES) {
      const data = `a${c}b`;
      const events = parse(sseFrame({ data }));
      // A line break splits the data into lines, which come back joined by LF.
      const expected = c === "\r" ? "a\nb" : data;
      assert.deepEqual(events, [{ event: "message", data: expected }], `byte ${c.charCodeAt(0)}`);
    }
    const whole = ALL_BYTES.join("");
    assert.equal(parse(sseFrame({ data: whole }))[0].data, whole.replace("\r", "\n"));
  });

  it("refuses an event or id holding CR, LF or NUL, and takes every other byte value", () => {
    for (const c of ALL_BYTES) {
      const value = `a${c}b`;
      for (const key of ["event", "id"] as const) {
        const item = { data: "d", [key]: value };
        if (c === "\r" || c === "\n" || c === "\0") {
          assert.throws(() => sseFrame(item), {
            name: "TypeError",
            message: `an event's ${key} must not hold CR, LF or NUL (it would end the field), ` +
              `got ${JSON.stringify(value)}`,
          });
        } else {
          const [event] = parse(sseFrame(item));
          assert.equal(key === "event" ? event.event : event.id, value, `byte ${c.charCodeAt(0)}`);
        }
      }
    }
  });

  it("refuses a retry that is not whole milliseconds, and data with no JSON form", () => {
    for (const retry of [-1, 1.5, Number.NaN, "10" as unknown as number]) {
      assert.throws(() => sseFrame({ data: "x", retry }), /retry must be a whole number/);
    }
    assert.throws(() => sseFrame({ data: undefined }), /data must be a string or have a JSON form/);
    assert.throws(() => sseFrame({ data: "x", id: Infinity }), /id must be a string or a number/);
    assert.throws(() => sseFrame({ data: "x", event: 1 as unknown as string }), /event must be/);
    assert.throws(() => sseFrame({ data: 10n }), TypeError);
  });

  it("has a heartbeat that is a comment: nothing a client dispatches", () => {
    assert.deepEqual(parse(HEARTBEAT + sseFrame({ data: "x" })), [{ event: "message", data: "x" }]);
  });
});
