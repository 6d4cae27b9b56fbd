// The attributes of every span and point of the Kafka client: the broker's host and port read from
// `host:port` (an IPv6 host unbracketed), and `error.type` the error's class, never its message.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { baseAttributes, SYSTEM } from "../../src/kafka/messaging_attributes.ts";
import { propertyOptions } from "../property.ts";

describe("baseAttributes", () => {
  it("names the system and the client, and the server only when one is given", () => {
    assert.deepEqual(baseAttributes("c"), {
      "messaging.system": SYSTEM,
      "messaging.client.id": "c",
    });
    assert.deepEqual(baseAttributes("c", "broker-1.internal:9093"), {
      "messaging.system": "kafka",
      "messaging.client.id": "c",
      "server.address": "broker-1.internal",
      "server.port": 9093,
    });
  });

  it("reads every host and port back, an IPv6 host without its brackets", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.domain(), fc.ipV4(), fc.ipV6().map((ip) => `[${ip}]`)),
        fc.integer({ min: 1, max: 65535 }),
        (host, port) => {
          const attributes = baseAttributes("c", `${host}:${port}`);
          assert.equal(attributes["server.address"], host.replace(/^\[(.*)\]$/, "$1"));
          assert.equal(attributes["server.port"], port);
        },
      ),
      propertyOptions(),
    );
  });
});
