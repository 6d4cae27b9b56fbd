// The keys of @thaw/thaw/kafka: Spring Boot's spring.kafka.* names under kafka:, checked once the
// entry is imported (a typo refused with the nearest key), and refused without kafka().
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, ConfigError } from "../../mod.ts";
import { KAFKA_KEYS } from "../../src/config/kafka_keys.ts";
import { kafka } from "../../kafka.ts";

describe("kafka.* keys", () => {
  it("declares Spring's names and the Java client's defaults", () => {
    assert.deepEqual(KAFKA_KEYS["kafka.bootstrap-servers"].default, ["localhost:9092"]);
    assert.equal(KAFKA_KEYS["kafka.consumer.auto-offset-reset"].default, "latest");
    assert.equal(KAFKA_KEYS["kafka.listener.concurrency"].default, 1);
  });

  it("refuses a key it does not know, naming the nearest", async () => {
    await assert.rejects(
      bootstrap({ config: { kafka: { "bootstrap-server": "127.0.0.1:9092" } }, kafka: kafka() }),
      (error: Error) =>
        error instanceof ConfigError &&
        /kafka\.bootstrap-server: unknown key; did you mean kafka\.bootstrap-servers\?/.test(
          error.message,
        ),
    );
    await assert.rejects(
      bootstrap({ config: { kafka: { consumer: { "group-di": "g" } } }, kafka: kafka() }),
      /kafka\.consumer\.group-di: unknown key; did you mean kafka\.consumer\.group-id\?/,
    );
  });

  it("refuses the keys without kafka(), saying what to import", async () => {
    await assert.rejects(
      bootstrap({ config: { kafka: { "bootstrap-servers": "127.0.0.1:9092" } } }),
      /import \{ kafka \} from "@thaw\/thaw\/kafka" and pass bootstrap\(\{ kafka: kafka\(\) \}\)/,
    );
  });
});
