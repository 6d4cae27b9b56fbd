// An outbox's options checked as its constructor promises: the options object, the sender and the
// table first, in that order, then each number against its least, each default in place.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type OutboxOptions,
  outboxSettings,
  outboxTable,
} from "../../../src/kafka/outbox/outbox_options.ts";
import type { RecordSender } from "../../../src/kafka/outgoing_record.ts";
import { propertyOptions } from "../../property.ts";

const SENDER: RecordSender = { send: () => Promise.resolve([]) };
const NUMBERS = [
  ["pollIntervalMs", 1],
  ["batchSize", 1],
  ["leaseMs", 1],
  ["retryDelayMs", 1],
  ["maxRetryDelayMs", 1],
  ["retentionMs", 0],
  ["sendTimeoutMs", 1],
] as const;

describe("outboxTable", () => {
  it("answers the table, thaw_outbox unless another is given", () => {
    assert.equal(outboxTable({}, SENDER), "thaw_outbox");
    assert.equal(outboxTable({ table: "orders_outbox" }, SENDER), "orders_outbox");
  });

  it("refuses the options, then the sender, then the table, in that order", () => {
    const noSender = {} as RecordSender;
    assert.throws(() => outboxTable({ tabel: "x" } as OutboxOptions, noSender), {
      name: "TypeError",
      message: /^Outbox: unknown option "tabel"/,
    });
    assert.throws(() => outboxTable({ table: "a b" }, noSender), {
      message: "Outbox: the sender has no send(records) method",
    });
    assert.throws(() => outboxTable({ table: "a b" }, SENDER), {
      message: /^Outbox: table "a b" is not a plain identifier/,
    });
    assert.throws(() => outboxTable({ table: "t".repeat(59) }, SENDER), {
      message: `Outbox: table ${"t".repeat(59)} is longer than 58 characters`,
    });
    assert.equal(outboxTable({ table: "t".repeat(58) }, SENDER), "t".repeat(58));
  });
});

describe("outboxSettings", () => {
  it("puts each default in place", () => {
    const settings = outboxSettings({}, "thaw_outbox");
    assert.deepEqual(
      { ...settings, backoff: [1, 2, 20].map((n) => settings.backoff.delayOf(n)) },
      {
        table: "thaw_outbox",
        pollIntervalMs: 1_000,
        batchSize: 100,
        leaseMs: 30_000,
        backoff: [100, 200, 30_000],
        retentionMs: 3_600_000,
        sendTimeoutMs: 10_000,
        logger: console,
      },
    );
  });

  it("takes a number only when it is a whole number of its least or more", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NUMBERS),
        fc.oneof(fc.integer({ min: -3, max: 5 }), fc.double(), fc.constantFrom("5", null)),
        ([name, least], value) => {
          const options = { [name]: value } as OutboxOptions;
          const valid = typeof value === "number" && Number.isSafeInteger(value) &&
            value >= least;
          if (valid) {
            const settings = outboxSettings(options, "t");
            if (name === "retryDelayMs") assert.equal(settings.backoff.delayOf(1), value);
            else if (name === "maxRetryDelayMs") assert.equal(settings.backoff.maxDelay, value);
            else assert.equal(settings[name], value);
          } else {
            assert.throws(() => outboxSettings(options, "t"), {
              name: "TypeError",
              message: `Outbox: ${name} must be a whole number of ${least} or more, not ${
                String(value)
              }`,
            });
          }
        },
      ),
      propertyOptions(),
    );
  });
});
