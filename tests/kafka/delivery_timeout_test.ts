// The error a send past its bound rejects with: Java's TimeoutException by name, the topics and at
// most three keys of the send named (safe to log), the last try's failure as its cause.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DELIVERY_TIMEOUT_KEY,
  deliveryTimeout,
  DeliveryTimeoutError,
} from "../../src/kafka/delivery_timeout.ts";
import type { OutgoingRecord } from "../../src/kafka/outgoing_record.ts";
import { propertyOptions } from "../property.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const record = (topic: string, key?: Uint8Array): OutgoingRecord => ({
  topic,
  key,
  value: undefined,
  headers: [],
  partition: undefined,
});

describe("deliveryTimeout", () => {
  it("names the topics once each and the keys, the bound and its key", () => {
    const error = deliveryTimeout(
      [record("orders", encode("o-1")), record("orders", encode("o-1")), record("audit")],
      2500,
      undefined,
    );
    assert.ok(error instanceof DeliveryTimeoutError);
    assert.equal(error.name, "TimeoutError");
    assert.equal(
      error.message,
      'send("orders", "audit") of key "o-1": no acknowledgement within 2500 ms ' +
        `(${DELIVERY_TIMEOUT_KEY}); the broker is out of reach or the partition has no leader`,
    );
    assert.equal("cause" in error, false);
  });

  it("names three keys at most, a key that is not text by its size, and keeps the cause", () => {
    const cause = new Error("not leader");
    const keys = ["a", "b", "c", "d", "e"].map((k) => record("t", encode(k)));
    const error = deliveryTimeout([record("t", new Uint8Array([0xff, 0xfe])), ...keys], 1, cause);
    assert.match(error.message, /^send\("t"\) of key \(2 bytes\), "a", "b", 3 more: /);
    assert.equal(error.cause, cause);
  });

  it("never names more than three keys, nor a key's control characters as they are", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 8 }),
        (keys) => {
          const error = deliveryTimeout(keys.map((k) => record("t", encode(k))), 10, undefined);
          const named = error.message.slice(0, error.message.indexOf(": no acknowledgement"));
          const distinct = new Set(keys).size;
          if (distinct > 3) assert.ok(named.endsWith(`, ${distinct - 3} more`), named);
          // deno-lint-ignore no-control-regex
          assert.doesNotMatch(named, /[\u0000-\u001f\u007f]/);
        },
      ),
      propertyOptions(),
    );
  });
});
