// The `thaw.broadcast.*` keys as the broadcaster reads them: defaults from their declaration, and
// the Kafka transport's brokers those of the app's Kafka client when the broadcast names none.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { broadcastSettings } from "../../src/broadcast/broadcast_settings.ts";

describe("broadcastSettings", () => {
  it("takes each key's default where it is left out", () => {
    const settings = broadcastSettings({});
    assert.equal(settings.transport, "memory");
    assert.deepEqual(settings.kafka.bootstrapServers, ["127.0.0.1:9092"]);
    assert.equal(settings.kafka.topic, "thaw.broadcast");
  });

  it("reaches the brokers of kafka.bootstrap-servers unless the broadcast names its own", () => {
    const kafka = { "bootstrap-servers": "b1:9092, b2:9092" };
    assert.deepEqual(broadcastSettings({ kafka }).kafka.bootstrapServers, ["b1:9092", "b2:9092"]);
    assert.deepEqual(
      broadcastSettings({ kafka: { "bootstrap-servers": ["b3:9092"] } }).kafka.bootstrapServers,
      ["b3:9092"],
    );
    const own = { thaw: { broadcast: { kafka: { "bootstrap-servers": ["own:9092"] } } }, kafka };
    assert.deepEqual(broadcastSettings(own).kafka.bootstrapServers, ["own:9092"]);
  });
});
