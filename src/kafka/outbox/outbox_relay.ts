// The relay of one outbox: passes under a lock with a lease that send the committed rows in id
// order and mark them sent, woken by commits, waiting after failures; a key whose send failed is
// held back, and a send given up on holds back every row until it settles.
import { loggableText } from "../../observe/loggable.ts";
import type { HeldLock } from "../../tasks/lock_manager.ts";
import type { SqlLockManager } from "../../tasks/sql_lock_manager.ts";
import { type RecordSender, writtenOf } from "../outgoing_record.ts";
import { groupName, groupRows } from "./order_groups.ts";
import type { OutboxSettings } from "./outbox_options.ts";
import type { OutboxRow } from "./outbox_row.ts";
import type { OutboxStore } from "./outbox_store.ts";
import { RelayPause } from "./relay_pause.ts";

// The lock's one key: one relay at a time per table.
const LOCK_KEY = "thaw-outbox-relay";

// How a pass of the relay ended.
// "blocked": some keys went, others failed: the backoff holds, but a commit ends it.
// "doubt": a send given up on may still be written: nothing goes until it settled.
type PassOutcome = "idle" | "more" | "busy" | "blocked" | "failed" | "doubt";

// Resolves once a timer ran: the event loop turned since it was called.
function loopTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Sends an outbox's committed rows through its sender, one replica's relay at a time. */
export class OutboxRelay {
  readonly #store: OutboxStore;
  readonly #locks: SqlLockManager;
  readonly #sender: RecordSender;
  readonly #settings: OutboxSettings;
  // The outbox, as the log lines name it.
  readonly #where: string;
  readonly #pause = new RelayPause();
  // A send given up on at the send timeout that the producer may still write: no row goes until
  // it settled, so that no row of its keys overtakes it.
  #inDoubt: Promise<unknown> | undefined;

  constructor(
    store: OutboxStore,
    locks: SqlLockManager,
    sender: RecordSender,
    settings: OutboxSettings,
    where: string,
  ) {
    this.#store = store;
    this.#locks = locks;
    this.#sender = sender;
    this.#settings = settings;
    this.#where = where;
  }

  /** Lets {@linkcode OutboxRelay.run} run (again, after a stop). */
  open(): void {
    this.#pause.open();
  }

  /** Tells {@linkcode OutboxRelay.run} to end: no batch starts after this, no wait lasts. */
  stop(): void {
    this.#pause.close();
  }

  /** A commit wrote rows: the relay looks now (or once its pass in flight ends). */
  poke(): void {
    this.#pause.poke();
  }

  /**
   * Passes until stopped: after a pass, the next at once when rows are left, else after the poll
   * interval or a commit; after failures in a row, after the backoff's wait.
   */
  async run(): Promise<void> {
    const { logger, backoff, pollIntervalMs } = this.#settings;
    const pause = this.#pause;
    let failures = 0;
    while (!pause.closing) {
      pause.passStarts();
      let outcome: PassOutcome;
      try {
        outcome = await this.#pass();
      } catch (error) {
        logger.error(`${this.#where}: the relay failed; it tries again`, error);
        outcome = "failed";
      }
      if (outcome === "doubt") {
        // Its settling wakes the relay; a commit meanwhile finds it still in doubt.
        await pause.sleep(backoff.maxDelay, true);
        continue;
      }
      if (outcome === "failed" || outcome === "blocked") {
        failures++;
        await pause.sleep(backoff.delayOf(failures), outcome === "blocked");
        continue;
      }
      failures = 0;
      if (outcome === "more") continue;
      await pause.sleep(pollIntervalMs, true);
    }
  }

  // One pass under the lock: batches until every unsent row was read once, a batch sent nothing,
  // or half the lease has gone by. A key whose send failed is blocked for the rest of the pass:
  // its later rows are read past, not sent (they keep their order), and the other keys go on.
  async #pass(): Promise<PassOutcome> {
    if (this.#inDoubt !== undefined) return "doubt";
    const { logger, leaseMs } = this.#settings;
    let held: HeldLock | undefined;
    try {
      held = await this.#locks.acquire({ key: LOCK_KEY, waitMs: 0, leaseMs });
    } catch (error) {
      logger.error(`${this.#where}: the relay's lock could not be taken`, error);
      return "failed";
    }
    if (held === undefined) return "busy";
    const blocked = new Set<string>();
    let sentAny = false;
    // How the pass ended, once the rows it could send went: a key held back keeps the backoff.
    const ended = (): PassOutcome => blocked.size === 0 ? "idle" : sentAny ? "blocked" : "failed";
    try {
      const until = performance.now() + leaseMs / 2;
      let after: unknown = 0;
      while (!this.#pause.closing) {
        // SQLite and a sender may both answer without I/O: a batch that did none waits for the
        // loop to turn, so that the relay never holds requests and timers for its whole backlog.
        // A batch that waited on I/O found the timer run already.
        const turned = loopTurn();
        if (this.#inDoubt !== undefined) return "doubt";
        await this.#store.purgeIfDue();
        const rows = await this.#store.unsent(after);
        if (rows.length === 0) return ended();
        after = rows[rows.length - 1].id;
        const sendable = rows.filter((row) => !blocked.has(groupName(row.record)));
        if (sendable.length > 0) {
          const sent = await this.#sendBatch(sendable, blocked);
          // Nothing of several keys went: the broker, not a record, is at fault.
          if (sent === 0 && new Set(sendable.map((row) => groupName(row.record))).size > 1) {
            return sentAny ? "blocked" : "failed";
          }
          if (sent > 0) sentAny = true;
        }
        // Before the lease's check: a turn that ran long counts against the lease too.
        await turned;
        if (performance.now() >= until) return blocked.size === 0 ? "more" : ended();
      }
      return ended();
    } finally {
      const release = () =>
        held.release().catch((error) =>
          logger.error(`${this.#where}: the relay's lock could not be given back`, error)
        );
      // A send in doubt keeps the lock (until it settles, or its lease ends): another replica
      // must not send its rows while this producer may still write them.
      // (Read anew: the narrowing of the pass's first line does not hold past its awaits.)
      const doubt = this.#inDoubt as Promise<unknown> | undefined;
      if (doubt === undefined) await release();
      else void doubt.finally(release);
    }
  }

  // Sends `rows` in one call (the producer keeps their order within each partition), then marks
  // them sent. When that fails, each key's rows are sent on their own, one key after the other (an
  // idempotent producer refuses two sends in flight to one partition): the keys whose send fails
  // stay, and are added to `blocked`; the others go. Resolves with how many rows went.
  async #sendBatch(rows: readonly OutboxRow[], blocked: Set<string>): Promise<number> {
    try {
      await this.#send(rows);
      await this.#store.markSent(rows.map((row) => row.id));
      return rows.length;
    } catch (error) {
      // The rows the producer wrote before the send failed (another key's record refused) are
      // marked, not sent again.
      const written = writtenOf(error);
      if (written.size > 0) {
        await this.#store.markSent(rows.filter((_, i) => written.has(i)).map((r) => r.id));
      }
      const groups = groupRows(rows, written);
      // A send in doubt: no key goes until it settled.
      if (groups.size === 1 || this.#inDoubt !== undefined) {
        this.#sendFailed(rows, error);
        for (const name of groups.keys()) blocked.add(name);
        return written.size;
      }
      const sent: unknown[] = [];
      for (const [name, group] of groups) {
        // A key's send that went in doubt holds back every key after it too.
        if (this.#inDoubt !== undefined) {
          blocked.add(name);
          continue;
        }
        try {
          await this.#send(group);
          for (const row of group) sent.push(row.id);
        } catch (error) {
          blocked.add(name);
          this.#sendFailed(group, error);
        }
      }
      if (sent.length > 0) await this.#store.markSent(sent);
      return sent.length + written.size;
    }
  }

  // The sender's send of `rows`, given up after the send timeout. One given up on may still be
  // written: it is in doubt until it settles, and the relay sends nothing meanwhile. Written, its
  // rows are marked sent then; refused, they are sent again, never behind a later row of their
  // key.
  async #send(rows: readonly OutboxRow[]): Promise<void> {
    const { logger, sendTimeoutMs } = this.#settings;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sending = this.#sender.send(rows.map((row) => row.record));
    try {
      await Promise.race([
        sending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const inDoubt = sending.then(
              () => this.#store.markSent(rows.map((row) => row.id)),
              () => {},
            ).catch((error) => {
              // Not marked: the rows go again, at least once.
              logger.error(`${this.#where}: a late send's rows could not be marked`, error);
            }).finally(() => {
              if (this.#inDoubt === inDoubt) this.#inDoubt = undefined;
              this.#pause.poke();
            });
            this.#inDoubt = inDoubt;
            reject(new Error(`no answer from the broker in ${sendTimeoutMs} ms`));
          }, sendTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  #sendFailed(rows: readonly OutboxRow[], error: unknown): void {
    this.#settings.logger.error(
      `${this.#where}: sending row ${String(rows[0].id)} to topic ` +
        `${JSON.stringify(loggableText(rows[0].record.topic))} failed; it and the later rows ` +
        "of its key stay, and are sent again",
      error,
    );
  }
}
