// kill -9 of the consuming process while records run: the next member of the group delivers
// again what was not committed, so every record the producer was told is acknowledged is
// processed at least once: none lost.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTopic, uniqueName } from "../broker.ts";
import { scriptCommand } from "../../runtime.ts";
import { watchChild, type WatchedChild } from "../../child_output.ts";
import { tempDir } from "../../temp_dir.ts";
import { producerSender, sendJson, until } from "./listener_fixture.ts";

const child = fileURLToPath(new URL("./consumer_child.ts", import.meta.url));

function processed(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : [];
}

describe("@KafkaListener and a crash", () => {
  it("delivers again what a process killed with SIGKILL had not committed", async () => {
    await using dir = await tempDir("thaw-kafka-crash-");
    const topic = uniqueName("listen-crash");
    const group = uniqueName("g");
    await createTopic(topic, 2);
    const sender = producerSender();
    const acknowledged: string[] = [];
    const send = async (from: number, count: number) => {
      const results = await sendJson(
        sender,
        topic,
        Array.from({ length: count }, (_, i) => ({ value: from + i, partition: (from + i) % 2 })),
      );
      for (const r of results) acknowledged.push(`${r.partition} ${r.offset}`);
    };
    const start = (file: string): WatchedChild => {
      const [command, args] = scriptCommand(child, [topic, group, file]);
      return watchChild(command, args);
    };
    const firstFile = join(dir.path, "first.txt");
    const secondFile = join(dir.path, "second.txt");
    let first: WatchedChild | undefined;
    let second: WatchedChild | undefined;
    try {
      await send(0, 300);
      first = start(firstFile);
      await until(() => processed(firstFile).length >= 60, "the first process's records");
      first.child.kill("SIGKILL");
      assert.equal(await first.exited, null);
      const before = processed(firstFile).length;
      assert.ok(before < 300, `the kill came mid-run (${before} of 300 done)`);
      await send(300, 100);
      second = start(secondFile);
      const seen = () => new Set([...processed(firstFile), ...processed(secondFile)]);
      // Bounded only against records that never come: then the assertion says which.
      await until(() => acknowledged.every((r) => seen().has(r)), "every record", 180_000)
        .catch(() => {});
      assert.equal(acknowledged.length, 400);
      const missing = acknowledged.filter((r) => !seen().has(r));
      assert.equal(
        missing.length,
        0,
        `${missing.length} acknowledged records never processed (partition offset): ` +
          missing.slice(0, 5).join(", "),
      );
    } finally {
      first?.child.kill("SIGKILL");
      second?.child.kill("SIGKILL");
      await first?.exited;
      await second?.exited;
      await sender.close();
    }
  });
});
