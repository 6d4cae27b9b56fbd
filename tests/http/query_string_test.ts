import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { decodeFormComponent, queryValues } from "../../src/http/query_string.ts";
import { propertyOptions } from "../property.ts";

// Names and values of any Unicode text (well-formed: a lone surrogate has no UTF-8).
const text = fc.string({ unit: "grapheme", maxLength: 8 });

describe("queryValues (property)", () => {
  it("reads what URLSearchParams reads from a query of valid UTF-8, absolute or relative", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text), { maxLength: 6 }),
        text,
        fc.boolean(),
        (pairs, name, relative) => {
          fc.pre(name !== "");
          const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join("&");
          const url = `${relative ? "" : "http://x"}/p?${query}#f=1`;
          const reference = new URLSearchParams(query);
          for (const key of [name, ...pairs.map(([k]) => k)].filter((k) => k !== "")) {
            assert.deepEqual(queryValues(url, key), reference.getAll(key), url);
            assert.deepEqual(queryValues(url, key, true), reference.getAll(key).slice(0, 1));
          }
        },
      ),
      propertyOptions(300),
    );
  });

  it("refuses a value whose encoded bytes are no UTF-8 with a 400 naming it, and nothing else", () => {
    const byte = fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0")}`);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(byte, fc.constantFrom("a", "+", "%", "%g")), { maxLength: 5 }),
        (parts) => {
          const value = parts.join("");
          let valid = true;
          try {
            new TextDecoder("utf-8", { fatal: true }).decode(
              new Uint8Array(
                (value.match(/(?:%[0-9a-f]{2})+/gi) ?? []).flatMap((run) =>
                  run.slice(1).split("%").map((h) => parseInt(h, 16))
                ),
              ),
            );
          } catch {
            valid = false;
          }
          // Each run must decode alone; joined runs are checked run by run below.
          for (const run of value.match(/(?:%[0-9a-f]{2})+/gi) ?? []) {
            try {
              decodeURIComponent(run);
            } catch {
              valid = false;
            }
          }
          const url = `/p?a=${value}`;
          if (valid) {
            assert.deepEqual(queryValues(url, "a"), [decodeFormComponent(value)]);
          } else {
            assert.throws(
              () => queryValues(url, "a"),
              (error: unknown) =>
                error instanceof HttpException && error.status.getValue() === 400 &&
                error.message ===
                  "Request parameter 'a' is not valid UTF-8 (its percent-encoded bytes)",
            );
            // Another parameter of the same query is read as ever.
            assert.deepEqual(queryValues(`${url}&b=1`, "b"), ["1"]);
          }
        },
      ),
      propertyOptions(400),
    );
  });

  it("reads a query of 2,000,000 empty pairs in one pass (each pair is read up to its own end)", () => {
    // Searching each pair's `=` to the end of the URL made this 2,000,000^2 / 2 steps a name:
    // minutes (seen: 400,000 pairs took 10 s).
    const url = "/p?" + "&".repeat(2_000_000) + "a=1";
    for (const name of ["a", "b", "c", "d", "e", "f", "g", "h"]) {
      assert.deepEqual(queryValues(url, name), name === "a" ? ["1"] : []);
    }
  });

  it("tells UTF-8 as a fatal TextDecoder does: every byte, every pair after a lead byte, the edges of the rest", () => {
    const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const hex = (b: number) => `%${b.toString(16).padStart(2, "0")}`;
    const check = (bytes: number[]) => {
      let expected: string | undefined;
      try {
        expected = fatal.decode(Uint8Array.from(bytes));
      } catch {
        expected = undefined;
      }
      const run = bytes.map(hex).join("");
      if (decodeFormComponent(run) !== expected) assert.fail(`${run}: expected ${expected}`);
    };
    // Where the bounds of a continuation byte lie (E0, ED, F0 and F4 narrow the first one).
    const edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
    for (let b0 = 0; b0 < 256; b0++) {
      check([b0]);
      // Every second byte after a lead byte; a byte before C0 starts no longer sequence.
      if (b0 >= 0xc0) { for (let b1 = 0; b1 < 256; b1++) check([b0, b1]); }
      else for (const b1 of edges) check([b0, b1]);
      if (b0 < 0xe0 || b0 > 0xf7) continue;
      for (const b1 of edges) {
        for (const b2 of edges) {
          check([b0, b1, b2]);
          if (b0 >= 0xf0) { for (const b3 of edges) check([b0, b1, b2, b3]); }
        }
      }
    }
  });

  it("keeps a % that starts no triple, and reads + as a space", () => {
    assert.deepEqual(queryValues("/p?a=100%&a=%zz+%2B", "a"), ["100%", "%zz +"]);
    assert.deepEqual(queryValues("/p?a&b=&a=", "a"), ["", ""]);
    assert.deepEqual(queryValues("/p", "a"), []);
  });
});
