// A process that runs one listener of the group given, and writes each record it finished to a
// file (synchronously, before the method resolves, so the line is there before the offset can be
// committed): the kill -9 test counts these lines against what the producer was told.
// Arguments: topic, group, file.
import { appendFileSync } from "node:fs";
import process from "node:process";
import { KafkaListener } from "../../../src/kafka/listener/kafka_listener.ts";
import type { KafkaRecord } from "../../../src/kafka/listener/kafka_record.ts";
import { kafkaListeners } from "../../../src/kafka/listener/listeners.ts";
import { KeptLog, producerSender, testHost } from "./listener_fixture.ts";

const [topic, group, file] = process.argv.slice(process.argv.length - 3);

class Worker {
  @KafkaListener({ topics: topic, groupId: group })
  async onRecord(_value: unknown, record: KafkaRecord): Promise<void> {
    // Some work: the kill lands while records run.
    await new Promise((resolve) => setTimeout(resolve, 2));
    appendFileSync(file, `${record.partition} ${record.offset}\n`);
  }
}

const listeners = kafkaListeners(
  [{ instance: new Worker() }],
  testHost(producerSender(), new KeptLog()),
);
await listeners.start();
console.log("started");
