// integration test: SQLite (the runtime's own), PostgreSQL and MariaDB (tools/databases.sh start)
// The outbox's start and close as an app's lifecycle calls them, against a sender that holds each
// send until the test lets it go: two starts at once run one relay, and a close that timed out
// leaves an outbox that starts again. The sender is a stand-in: the broker is not what is tested.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { SqlClient } from "../../../src/data/sql_client.ts";
import { Outbox } from "../../../src/kafka/outbox/outbox.ts";
import type {
  OutgoingRecord,
  RecordMetadata,
  RecordSender,
} from "../../../src/kafka/outgoing_record.ts";
import { KINDS, testPools } from "../../sql/pools.ts";
import { createOutboxTable, textRecord, waitFor, writeInTransaction } from "./outbox_support.ts";

// Holds every send until `release()`; counts the sends begun and keeps what each one carried.
class HeldSender implements RecordSender {
  readonly sent: string[] = [];
  begun = 0;
  #held: Promise<void>;
  #release: () => void = () => {};

  constructor() {
    this.#held = new Promise((resolve) => this.#release = resolve);
  }

  async send(records: readonly OutgoingRecord[]): Promise<readonly RecordMetadata[]> {
    this.begun++;
    await this.#held;
    const decoder = new TextDecoder();
    for (const record of records) this.sent.push(decoder.decode(record.value));
    return records.map((r, i) => ({ topic: r.topic, partition: 0, offset: BigInt(i) }));
  }

  release(): void {
    this.#release();
  }
}

const quiet = { error: () => {} };

for (const kind of KINDS) {
  describe(`Outbox on ${kind}: start and close`, () => {
    const closing: (() => Promise<unknown>)[] = [];
    after(async () => {
      for (const close of closing.reverse()) await close();
    });
    const open = testPools();

    async function outboxOn(sender: RecordSender): Promise<{ sql: SqlClient; outbox: Outbox }> {
      const sql = new SqlClient((await open(kind)).pool);
      await createOutboxTable(sql);
      const outbox = new Outbox(sql, sender, { pollIntervalMs: 50, logger: quiet });
      closing.push(() => outbox.close(30_000));
      return { sql, outbox };
    }

    it("starts one relay for two starts at once: a close waits for the batch in flight", async () => {
      // Which of two relays takes the batch is a matter of timing: a few rounds each give the
      // untracked one its chance.
      for (let round = 0; round < 6; round++) {
        const sender = new HeldSender();
        const { sql, outbox } = await outboxOn(sender);
        await Promise.all([outbox.start(), outbox.start()]);
        await writeInTransaction(sql, outbox, [textRecord("t", "k", `round ${round}`)]);
        await waitFor("the send to begin", () => Promise.resolve(sender.begun === 1));
        // The batch is held: a close with no time to wait cannot have seen it end.
        assert.equal(await outbox.close(0), false, `round ${round}`);
        sender.release();
        assert.equal(await outbox.close(30_000), true);
        assert.deepEqual(sender.sent, [`round ${round}`]);
      }
    });

    it("starts again after a close that timed out, once the batch in flight ended", async () => {
      const sender = new HeldSender();
      const { sql, outbox } = await outboxOn(sender);
      await outbox.start();
      await writeInTransaction(sql, outbox, [textRecord("t", "k", "before")]);
      await waitFor("the send to begin", () => Promise.resolve(sender.begun === 1));
      assert.equal(await outbox.close(0), false);
      const started = outbox.start();
      sender.release();
      await started;
      await writeInTransaction(sql, outbox, [textRecord("t", "k", "after")]);
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      assert.deepEqual(sender.sent, ["before", "after"]);
      assert.equal(await outbox.close(30_000), true);
    });

    it("a close during the start leaves no relay running", async () => {
      const sender = new HeldSender();
      sender.release();
      const { sql, outbox } = await outboxOn(sender);
      const started = outbox.start();
      assert.equal(await outbox.close(30_000), true);
      await started;
      await writeInTransaction(sql, outbox, [textRecord("t", "k", "unsent")]);
      // A relay would send it at once: the poll interval is 50 ms, and a commit wakes it.
      assert.equal(await outbox.backlog(), 1);
      await outbox.start();
      await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
      assert.deepEqual(sender.sent, ["unsent"]);
    });

    // A short lease ends each pass after one batch ("more"): the next pass, at once, must not
    // skip the turn either.
    for (const leaseMs of [120_000, 1]) {
      it(`lets timers and I/O run between batches, even with a sender that answers at once (lease ${leaseMs} ms)`, async () => {
        // SQLite answers without I/O, and so may a sender: a relay that never waits on a task
        // would hold the event loop (no request served, no timer run) until its backlog is gone.
        const sent: string[] = [];
        const instant: RecordSender = {
          send: (records) => {
            for (const record of records) sent.push(new TextDecoder().decode(record.value));
            return Promise.resolve(
              records.map((r, i) => ({ topic: r.topic, partition: 0, offset: BigInt(i) })),
            );
          },
        };
        const sql = new SqlClient((await open(kind)).pool);
        await createOutboxTable(sql);
        const outbox = new Outbox(sql, instant, { batchSize: 10, leaseMs, logger: quiet });
        closing.push(() => outbox.close(30_000));
        const total = 400;
        await writeInTransaction(
          sql,
          outbox,
          Array.from({ length: total }, (_, i) => textRecord("t", `k${i % 7}`, `r${i}`)),
        );
        await outbox.start();
        // A task queued now runs once the relay lets the loop turn: within a batch or two.
        const atTimer = await new Promise<number>((resolve) =>
          setTimeout(() => resolve(sent.length))
        );
        // The batch under way when the timer was set, and at most the one after it (its own timer
        // came later, so it runs after this one).
        assert.ok(atTimer <= 2 * 10, `the relay sent ${atTimer} rows before a timer could run`);
        await waitFor("the backlog to empty", async () => await outbox.backlog() === 0);
        assert.equal(sent.length, total);
      });
    }
  });
}
