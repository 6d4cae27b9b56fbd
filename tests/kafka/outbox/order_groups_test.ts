// The records whose order the relay keeps, against a model: two records are of one group exactly
// when they share topic, partition asked for and key bytes; and rows grouped keep their order.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { OutgoingRecord } from "../../../src/kafka/outgoing_record.ts";
import { groupName, groupRows } from "../../../src/kafka/outbox/order_groups.ts";
import type { OutboxRow } from "../../../src/kafka/outbox/outbox_row.ts";
import { propertyOptions } from "../../property.ts";

const record: fc.Arbitrary<OutgoingRecord> = fc.record({
  topic: fc.constantFrom("orders", "orders\u00001", "payments"),
  // Few keys, often none, and partitions often not asked for: records that share a group are common.
  key: fc.option(
    fc.constantFrom(...[[], [1], [1, 0], [0x10], [0, 1]].map((b) => new Uint8Array(b))),
    { nil: undefined, freq: 2 },
  ),
  value: fc.option(fc.uint8Array({ maxLength: 3 }), { nil: undefined }),
  headers: fc.constant([]),
  partition: fc.option(fc.nat(2), { nil: undefined, freq: 2 }),
});

// The model's group: what the relay must keep in order, and nothing else.
const modelGroup = (r: OutgoingRecord) =>
  JSON.stringify([r.topic, r.partition ?? null, r.key === undefined ? null : [...r.key]]);

describe("order groups", () => {
  it("put two records in one group exactly when the model does", () => {
    fc.assert(
      fc.property(record, record, (a, b) => {
        assert.equal(groupName(a) === groupName(b), modelGroup(a) === modelGroup(b));
      }),
      propertyOptions(),
    );
  });

  it("group rows in order, leaving out those skipped", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), fc.array(fc.nat(11)), (records, skip) => {
        const rows: OutboxRow[] = records.map((record, id) => ({ id, record }));
        const skipped = new Set(skip);
        const groups = groupRows(rows, skipped);
        const kept = rows.filter((_, i) => !skipped.has(i));
        // Each group's rows in the order of `rows`, the groups in the order of their first row.
        assert.deepEqual(
          [...groups.values()].flat().sort((x, y) => Number(x.id) - Number(y.id)),
          kept,
        );
        for (const [name, group] of groups) {
          assert.deepEqual(group, kept.filter((row) => groupName(row.record) === name));
        }
        assert.deepEqual(
          [...groups.keys()],
          [...new Set(kept.map((row) => groupName(row.record)))],
        );
      }),
      propertyOptions(),
    );
  });
});
