// A listener of a dead-letter topic, written as the docs show it: it gets every record that went
// there, a value that is not JSON as its bytes, and what it gives up on is logged and committed,
// never sent to `<topic>.DLT.DLT`. And `value: "bytes"`: a listener that takes the raw value.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { topicSize } from "../outbox/outbox_support.ts";
import { uniqueName } from "../broker.ts";
import { listenerTopic, until, withListeners } from "./listener_fixture.ts";

const encoder = new TextEncoder();
const notJson = encoder.encode("not json \u0000\u00ff");

describe("@KafkaListener on a dead-letter topic", () => {
  it("gets a record that is not JSON as its bytes, and never dead-letters again", async () => {
    const topic = await listenerTopic("dlt-listen", 1, { dlt: true });
    const seen: { value: unknown; record: KafkaRecord }[] = [];
    class Orders {
      @KafkaListener({ topics: topic, groupId: uniqueName("orders"), retry: { attempts: 1 } })
      onOrder(_value: unknown): void {}

      @KafkaListener({
        topics: `${topic}.DLT`,
        groupId: uniqueName("orders-dlt"),
        retry: { attempts: 1 },
      })
      onDeadLetter(value: unknown, record: KafkaRecord): void {
        seen.push({ value, record });
        // A DLT listener that fails: logged and committed, not sent on to a DLT of the DLT.
        throw new Error("the dead-letter handler failed too");
      }
    }
    await withListeners(new Orders(), async ({ sender, log, listeners }) => {
      await listeners.start();
      await sender.send([{
        topic,
        key: encoder.encode("k"),
        value: notJson,
        headers: [],
        partition: undefined,
      }]);
      const logged = () => log.lines.join("\n");
      // At least once: a member the group dropped (a loaded machine that missed its heartbeats)
      // gets what it had not committed again, here or on the orders' side (a second dead letter).
      // What holds is the order and that the failure ends its record's turn.
      await until(() => seen.length >= 1, "the dead letter at its listener", undefined, logged);
      const [{ value, record }] = seen;
      assert.ok(value instanceof Uint8Array, "the value as its bytes");
      assert.deepEqual([...value], [...notJson]);
      assert.equal(record.headers.get("kafka_dlt-original-topic"), topic);
      await until(
        () => log.lines.some((line) => /a dead letter goes to no other DLT/.test(line)),
        "the failure logged",
        undefined,
        logged,
      );
      // A record after it on the DLT's one partition: its coming shows that the failed record was
      // given up, not run again and again, and that nothing of it comes after the marker.
      await sender.send([{
        topic: `${topic}.DLT`,
        key: undefined,
        value: encoder.encode('"marker"'),
        headers: [],
        partition: 0,
      }]);
      const isMarker = (s: { value: unknown }) => s.value === "marker";
      await until(() => seen.some(isMarker), "the marker at the DLT's listener", undefined, logged);
      const before = seen.slice(0, seen.findIndex(isMarker));
      assert.ok(before.length >= 1, logged());
      for (const { value } of before) {
        assert.ok(
          value instanceof Uint8Array,
          `only the dead letter before the marker: ${logged()}`,
        );
        assert.deepEqual([...value], [...notJson]);
      }
      assert.ok(
        seen.slice(before.length + 1).every(isMarker),
        `nothing but the marker again after it: ${logged()}`,
      );
      assert.ok(
        !log.lines.some((line) => line.includes(`${topic}.DLT.DLT`)),
        `no DLT of the DLT: ${log.lines.join("\n")}`,
      );
    });
    // The broker made no DLT of the DLT (a send there would have created it).
    await assert.rejects(topicSize(`${topic}.DLT.DLT`, 1));
  });

  it('value: "bytes" gives the method the raw value, JSON or not, and null for none', async () => {
    const topic = await listenerTopic("bytes-listen", 1);
    const seen: unknown[] = [];
    class Raw {
      @KafkaListener({ topics: topic, groupId: uniqueName("raw"), value: "bytes" })
      onRecord(value: Uint8Array | null): void {
        seen.push(value);
      }
    }
    await withListeners(new Raw(), async ({ sender, listeners }) => {
      await listeners.start();
      const record = (value: Uint8Array | undefined) => ({
        topic,
        key: undefined,
        value,
        headers: [],
        partition: undefined,
      });
      await sender.send([record(notJson), record(encoder.encode('{"a":1}')), record(undefined)]);
      await until(() => seen.length === 3, "three records");
      // Bytes (a Buffer, on the client's side: a Uint8Array all the same), byte for byte.
      assert.ok(seen.slice(0, 2).every((v) => v instanceof Uint8Array));
      assert.deepEqual(seen.map((v) => v === null ? null : [...(v as Uint8Array)]), [
        [...notJson],
        [...encoder.encode('{"a":1}')],
        null,
      ]);
    });
  });

  it('refuses value: "bytes" with a schema, and a value kind it does not know', () => {
    assert.throws(
      () => KafkaListener({ topics: "t", value: "bytes", schema: { "~standard": {} } } as never),
      /schema/,
    );
    assert.throws(
      () => KafkaListener({ topics: "t", value: "text" } as never),
      /value is "json" or "bytes"/,
    );
  });
});
