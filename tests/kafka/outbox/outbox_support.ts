// What the outbox's tests share: an outbox table on a fresh database of each kind, records made of
// text, waits on the table's state, and a topic's end offsets.
import process from "node:process";
import { Admin } from "@platformatic/kafka";
import type { SqlClient } from "../../../src/data/sql_client.ts";
import { innermostTransaction } from "../../../src/data/transaction_scope.ts";
import type { OutgoingRecord } from "../../../src/kafka/outgoing_record.ts";
import { outboxTableStatements } from "../../../src/kafka/outbox/outbox_table.ts";
import { SqlLockManager } from "../../../src/tasks/sql_lock_manager.ts";
import type { Outbox } from "../../../src/kafka/outbox/outbox.ts";
import { KAFKA_BOOTSTRAP } from "../broker.ts";

const encoder = new TextEncoder();

/** A record of text: key, value (`null`: none) and headers. */
export function textRecord(
  topic: string,
  key: string | undefined,
  value: string | null,
  headers: readonly [string, string][] = [],
  partition?: number,
): OutgoingRecord {
  return {
    topic,
    key: key === undefined ? undefined : encoder.encode(key),
    value: value === null ? undefined : encoder.encode(value),
    headers: headers.map(([name, text]) => [name, encoder.encode(text)] as const),
    partition,
  };
}

/** Creates the outbox table and its lock table, as the migration does. */
export async function createOutboxTable(sql: SqlClient, table = "thaw_outbox"): Promise<void> {
  for (const text of outboxTableStatements(sql.kind, table)) await sql.unsafe(text);
  await sql.unsafe(SqlLockManager.createTable(sql.kind, `${table}_lock`));
}

/** Writes `records` through `outbox` in one transaction of `sql`, which commits unless `rollback`. */
export async function writeInTransaction(
  sql: SqlClient,
  outbox: Outbox,
  records: readonly OutgoingRecord[],
  rollback = false,
): Promise<void> {
  await sql.transaction(async (status) => {
    for (const record of records) await outbox.write(innermostTransaction()!, record);
    if (rollback) status.setRollbackOnly();
  });
}

/** Resolves once `check` does, trying again every few milliseconds; gives up after two minutes. */
export async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + Number(process.env.OUTBOX_GIVE_UP ?? 120_000);
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How many records `topic` holds, over its partitions. */
export async function topicSize(
  topic: string,
  partitions: number,
  bootstrap: readonly string[] = [KAFKA_BOOTSTRAP],
): Promise<number> {
  const admin = new Admin({ clientId: "thaw-tests", bootstrapBrokers: [...bootstrap] });
  try {
    const listed = await admin.listOffsets({
      topics: [{
        name: topic,
        partitions: Array.from({ length: partitions }, (_, i) => ({
          partitionIndex: i,
          timestamp: -1n,
        })),
      }],
    });
    return listed[0].partitions.reduce((sum, p) => sum + Number(p.offset), 0);
  } finally {
    await admin.close();
  }
}
