// integration test: SQLite (the runtime's own), PostgreSQL and MariaDB (tools/databases.sh start),
// and the Kafka broker (tools/kafka.sh start)
// The outbox against the real databases and the real broker: a record written in a transaction
// goes once the transaction commits, and never when it rolls back; bytes kept as they were
// written; a missing table named; one relay at a time; a broker out of reach for a while.
import assert from "node:assert/strict";
import process from "node:process";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { SqlClient } from "../../../src/data/sql_client.ts";
import { innermostTransaction } from "../../../src/data/transaction_scope.ts";
import { Outbox } from "../../../src/kafka/outbox/outbox.ts";
import { KafkaProducer } from "../../../src/kafka/kafka_producer.ts";
import type { OutgoingRecord, RecordSender } from "../../../src/kafka/outgoing_record.ts";
import { SqlLockManager } from "../../../src/tasks/sql_lock_manager.ts";
import { openPool } from "../../../src/sql/open_pool.ts";
import { KINDS, testPools } from "../../sql/pools.ts";
import { tcpProxy } from "../../sql/tcp_proxy.ts";
import { propertyOptions } from "../../property.ts";
import { createTopic, readTopic, uniqueName } from "../broker.ts";
import { producerSender } from "./producer_sender.ts";
import {
  createOutboxTable,
  textRecord,
  topicSize,
  waitFor,
  writeInTransaction,
} from "./outbox_support.ts";

const quiet = { error: (...args: unknown[]) => process.env.OUTBOX_DEBUG && console.error(...args) };

for (const kind of KINDS) {
  describe(`Outbox on ${kind}`, () => {
    // Registered before the pools' own, so that the relays stop before the pools close.
    const closing: (() => Promise<unknown>)[] = [];
    after(async () => {
      for (const close of closing.reverse()) await close();
    });
    const open = testPools();

    async function database(table = true) {
      const made = await open(kind);
      const sql = new SqlClient(made.pool);
      if (table) await createOutboxTable(sql);
      return { ...made, sql };
    }

    function outboxOf(sql: SqlClient, sender: RecordSender, options = {}): Outbox {
      const outbox = new Outbox(sql, sender, { pollIntervalMs: 50, logger: quiet, ...options });
      closing.push(() => outbox.close(30_000));
      return outbox;
    }

    function sender(): RecordSender {
      const made = producerSender();
      closing.push(() => made.close());
      return made;
    }

    it("sends what a committed transaction wrote, in order, and marks its rows sent", async () => {
      const { sql, admin } = await database();
      const topic = uniqueName("outbox-commit");
      await createTopic(topic, 2);
      const outbox = outboxOf(sql, sender());
      await outbox.start();
      await writeInTransaction(sql, outbox, [
        textRecord(topic, "k1", "one", [["trace", "a"], ["trace", "b"], ["empty", ""]]),
        textRecord(topic, "k1", null),
        textRecord(topic, undefined, "no key", [], 1),
        textRecord(topic, "k1", "three"),
      ]);
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      const read = await readTopic(topic, 4);
      const k1 = read.filter((r) => r.key === "k1").map((r) => r.value);
      assert.deepEqual(k1, ["one", undefined, "three"]);
      const first = read.find((r) => r.value === "one")!;
      // readTopic keeps a repeated name's last value; the bytes test sees both.
      assert.deepEqual([...first.headers], [["trace", "b"], ["empty", ""]]);
      const noKey = read.find((r) => r.value === "no key")!;
      assert.equal(noKey.key, undefined);
      assert.equal(noKey.partition, 1);
      const rows = await admin.query("SELECT sent_at FROM thaw_outbox");
      assert.equal(rows.length, 4);
      assert.ok(rows.every((row) => row.sent_at !== null), JSON.stringify(rows));
    });

    it("writes nothing and sends nothing for a transaction that rolls back", async () => {
      const { sql, admin } = await database();
      const topic = uniqueName("outbox-rollback");
      await createTopic(topic);
      const outbox = outboxOf(sql, sender());
      await outbox.start();
      await writeInTransaction(sql, outbox, [textRecord(topic, "k", "rolled back")], true);
      await assert.rejects(
        sql.transaction(async () => {
          await outbox.write(innermostTransaction()!, textRecord(topic, "k", "thrown"));
          throw new Error("the work failed");
        }),
        /the work failed/,
      );
      assert.equal(await outbox.backlog(), 0);
      assert.deepEqual(await admin.query("SELECT id FROM thaw_outbox"), []);
      await writeInTransaction(sql, outbox, [textRecord(topic, "k", "committed")]);
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      // The committed record is the topic's first and only one.
      assert.deepEqual((await readTopic(topic, 1)).map((r) => r.value), ["committed"]);
      assert.equal(await topicSize(topic, 1), 1);
    });

    it("keeps keys, values, headers and partitions byte for byte through the table", async () => {
      const { sql } = await database();
      const relayed: OutgoingRecord[] = [];
      const capture: RecordSender = {
        send: (records) => {
          relayed.push(...records);
          return Promise.resolve(
            records.map((r) => ({ topic: r.topic, partition: 0, offset: 0n })),
          );
        },
      };
      const outbox = outboxOf(sql, capture, { retentionMs: 0 });
      await outbox.start();
      const bytes = fc.uint8Array({ maxLength: 300 });
      const record = fc.record({
        topic: fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/),
        key: fc.option(bytes, { nil: undefined }),
        value: fc.option(bytes, { nil: undefined }),
        headers: fc.array(fc.tuple(fc.string({ maxLength: 20 }), bytes), { maxLength: 4 }),
        partition: fc.option(fc.nat({ max: 1000 }), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 5 }), async (records) => {
          relayed.length = 0;
          await writeInTransaction(sql, outbox, records);
          await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
          const plain = (r: OutgoingRecord) => ({
            topic: r.topic,
            key: r.key === undefined ? undefined : [...r.key],
            value: r.value === undefined ? undefined : [...r.value],
            // Header names travel as UTF-8, as on the wire: a lone surrogate becomes U+FFFD.
            headers: r.headers.map((
              [n, v],
            ) => [new TextDecoder().decode(new TextEncoder().encode(n)), [...v]]),
            partition: r.partition,
          });
          const byGroup = (list: readonly OutgoingRecord[]) =>
            JSON.stringify(
              list.map(plain).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
            );
          assert.equal(byGroup(relayed), byGroup(records));
        }),
        propertyOptions(kind === "sqlite" ? 40 : 15),
      );
    });

    it("drops the records of a NESTED call rolled back to its savepoint, keeps the rest", async () => {
      const { sql } = await database();
      const sent: string[] = [];
      const capture: RecordSender = {
        send: (records) => {
          sent.push(...records.map((r) => new TextDecoder().decode(r.value)));
          return Promise.resolve(
            records.map((r) => ({ topic: r.topic, partition: 0, offset: 0n })),
          );
        },
      };
      const outbox = outboxOf(sql, capture);
      await outbox.start();
      await sql.transaction(async () => {
        await outbox.write(innermostTransaction()!, textRecord("t", "k", "before"));
        await sql.transaction(async () => {
          await outbox.write(innermostTransaction()!, textRecord("t", "k", "nested"));
          throw new Error("the nested work failed");
        }, { propagation: "NESTED" }).catch(() => {});
        await outbox.write(innermostTransaction()!, textRecord("t", "k", "after"));
      });
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      assert.deepEqual(sent, ["before", "after"]);
    });

    it("deletes sent rows once their retention ended, and keeps the unsent", async () => {
      const { sql, admin } = await database();
      const sent: string[] = [];
      let refuse = false;
      const capture: RecordSender = {
        send: (records) => {
          if (refuse) return Promise.reject(new Error("refused"));
          sent.push(...records.map((r) => new TextDecoder().decode(r.value)));
          return Promise.resolve(
            records.map((r) => ({ topic: r.topic, partition: 0, offset: 0n })),
          );
        },
      };
      const outbox = outboxOf(sql, capture, { retentionMs: 1, retryDelayMs: 10 });
      await outbox.start();
      await writeInTransaction(sql, outbox, [textRecord("t", "a", "first")]);
      await waitFor("the first to go", () => Promise.resolve(sent.length === 1));
      refuse = true;
      await writeInTransaction(sql, outbox, [textRecord("t", "b", "second")]);
      // The next passes purge the first row, once its millisecond went by; the second stays.
      await waitFor(
        "the sent row to be deleted",
        async () => (await admin.query("SELECT id FROM thaw_outbox")).length === 1,
      );
      assert.equal(await outbox.backlog(), 1);
      refuse = false;
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      assert.deepEqual(sent, ["first", "second"]);
    });

    it("refuses a write to a datasource without the table, naming it and the migration", async () => {
      const { sql, pool } = await database(false);
      const outbox = outboxOf(sql, sender());
      await assert.rejects(
        writeInTransaction(sql, outbox, [textRecord("t", "k", "v")]),
        (error: Error) => {
          assert.match(
            error.message,
            new RegExp(`datasource "${pool.name}" has no table thaw_outbox`),
          );
          assert.match(error.message, /outboxMigration\(\)/);
          assert.match(
            error.message,
            new RegExp(`migrations/${pool.name}/V<next>__thaw_outbox\\.ts`),
          );
          return true;
        },
      );
      await assert.rejects(outbox.start(), /has no table thaw_outbox/);
    });

    it("relays with one outbox at a time, and takes over a lock whose holder died", async () => {
      const { sql, datasource } = await database();
      const topic = uniqueName("outbox-two");
      await createTopic(topic);
      // A second process's pool on the same database.
      const otherPool = await openPool(datasource, {});
      closing.push(() => otherPool.close());
      const other = new SqlClient(otherPool);
      // A relay that died holding the lock: taken, never given back, with a short lease.
      const dead = await new SqlLockManager(sql, { table: "thaw_outbox_lock" }).acquire({
        key: "thaw-outbox-relay",
        waitMs: 0,
        leaseMs: 1_500,
      });
      assert.notEqual(dead, undefined);
      const real = sender();
      const inFlight = [0, 0];
      let overlaps = 0;
      const tracked = (me: number): RecordSender => ({
        async send(records) {
          inFlight[me]++;
          if (inFlight[1 - me] > 0) overlaps++;
          try {
            return await real.send(records);
          } finally {
            inFlight[me]--;
          }
        },
      });
      const a = outboxOf(sql, tracked(0), { batchSize: 7, leaseMs: 10_000 });
      const b = outboxOf(other, tracked(1), { batchSize: 7, leaseMs: 10_000 });
      const count = 200;
      for (let i = 0; i < count; i += 20) {
        await writeInTransaction(
          i % 40 === 0 ? sql : other,
          i % 40 === 0 ? a : b,
          Array.from({ length: 20 }, (_, j) => textRecord(topic, `k${(i + j) % 5}`, `${i + j}`)),
        );
      }
      await Promise.all([a.start(), b.start()]);
      await waitFor("the backlog to empty", async () => await a.backlog() === 0);
      assert.equal(overlaps, 0);
      const read = await readTopic(topic, count);
      assert.equal(await topicSize(topic, 1), count);
      for (let k = 0; k < 5; k++) {
        const values = read.filter((r) => r.key === `k${k}`).map((r) => Number(r.value));
        assert.deepEqual(values, [...values].sort((x, y) => x - y));
        assert.equal(values.length, count / 5);
      }
    });

    it("holds back only the key of a record the broker refuses; the other keys go", async () => {
      const { sql } = await database();
      const topic = uniqueName("outbox-refused");
      await createTopic(topic);
      const failures: unknown[] = [];
      // Backing off for an hour after a failure: the other keys must not wait on it.
      const outbox = outboxOf(sql, sender(), {
        logger: { error: (_: string, error: unknown) => failures.push(error) },
        batchSize: 2,
        retryDelayMs: 3_600_000,
        maxRetryDelayMs: 3_600_000,
      });
      // Larger than the broker takes (message.max.bytes is 1 MiB): refused at every try.
      const huge = "x".repeat(2 * 1024 * 1024);
      await writeInTransaction(sql, outbox, [
        textRecord(topic, "bad", huge),
        textRecord(topic, "bad", "after the refused one"),
        textRecord(topic, "good", "g0"),
      ]);
      await outbox.start();
      await waitFor("the good key's record", async () => await outbox.backlog() === 2);
      await writeInTransaction(sql, outbox, [textRecord(topic, "good", "g1")]);
      await waitFor("the good key's next record", async () => await outbox.backlog() === 2);
      assert.ok(failures.length >= 1);
      const read = await readTopic(topic, 2);
      assert.deepEqual(read.map((r) => [r.key, r.value]), [["good", "g0"], ["good", "g1"]]);
      assert.equal(await topicSize(topic, 1), 2);
    });

    it("keeps the rows while the broker is out of reach, and sends them in order after", async () => {
      const { sql } = await database();
      const topic = uniqueName("outbox-down");
      await createTopic(topic);
      const proxy = await tcpProxy("127.0.0.1", 9092);
      closing.push(() => proxy.down());
      // The producer apps send through (its retries bounded): the bare client's idempotent
      // producer, told no retries, retries without end and may never recover.
      // A send given up on is in doubt until the producer answers it (at its delivery timeout
      // here): the relay sends nothing meanwhile.
      const through = new KafkaProducer(
        { clientId: "thaw-outbox-tests", bootstrapBrokers: [`127.0.0.1:${proxy.port}`] },
        -1,
        2,
        2_000,
      );
      closing.push(() => through.close());
      const failures: unknown[] = [];
      const outbox = outboxOf(sql, through, {
        logger: { error: (_: string, error: unknown) => failures.push(error) },
        retryDelayMs: 20,
        maxRetryDelayMs: 200,
        // The idempotent producer waits for ever for a broker it never reached.
        sendTimeoutMs: 300,
      });
      await outbox.start();
      for (let i = 0; i < 5; i++) {
        await writeInTransaction(sql, outbox, [textRecord(topic, "k", `${i}`)]);
      }
      await waitFor("two failed sends", () => Promise.resolve(failures.length >= 2));
      assert.equal(await outbox.backlog(), 5);
      await proxy.up();
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      // A send given up on may still go once the broker answers: at least once, in order.
      const read = await readTopic(topic, await topicSize(topic, 1));
      assert.deepEqual([...new Set(read.map((r) => r.value))], ["0", "1", "2", "3", "4"]);
    });
  });
}
