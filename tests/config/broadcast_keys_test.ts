// The keys of @thaw/thaw/broadcast: checked once its entry is imported.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap } from "../../mod.ts";
import { BROADCAST_KEYS } from "../../src/config/broadcast_keys.ts";
import "../../broadcast.ts";

describe("thaw.broadcast.* keys", () => {
  it("declares the transports and the defaults", () => {
    assert.deepEqual(BROADCAST_KEYS["thaw.broadcast.transport"].choices, [
      "memory",
      "redis",
      "kafka",
    ]);
    assert.equal(BROADCAST_KEYS["thaw.broadcast.transport"].default, "memory");
    assert.equal(BROADCAST_KEYS["thaw.broadcast.max-buffered"].default, 1_048_576);
    assert.equal(BROADCAST_KEYS["thaw.broadcast.kafka.topic"].default, "thaw.broadcast");
  });

  it("refuses a transport it does not know, a bound below 1 and a typo, naming the key", async () => {
    await assert.rejects(
      bootstrap({ config: { thaw: { broadcast: { transport: "rabbitmq" } } } }),
      /thaw\.broadcast\.transport/,
    );
    await assert.rejects(
      bootstrap({ config: { thaw: { broadcast: { "max-buffered": 0 } } } }),
      /thaw\.broadcast\.max-buffered/,
    );
    await assert.rejects(
      bootstrap({ config: { thaw: { broadcast: { redis: { uri: "redis://x" } } } } }),
      /thaw\.broadcast\.redis\.uri/,
    );
  });
});
