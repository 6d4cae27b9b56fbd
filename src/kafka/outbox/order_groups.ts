// The records whose order the relay keeps among themselves: one topic's, of one key (and partition,
// when one is asked for). A row whose send failed holds back the later rows of its group only, and
// the other groups go on. Pure.
import type { OutgoingRecord } from "../outgoing_record.ts";
import type { OutboxRow } from "./outbox_row.ts";

/**
 * The name of the group of `record`: equal for two records of one topic, one key (as bytes) and
 * one partition asked for (or none). Records without a key keep their order among themselves too.
 */
export function groupName(record: OutgoingRecord): string {
  const key = record.key === undefined
    ? "-"
    : "k" + Array.from(record.key, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${record.topic}\u0000${record.partition ?? ""}\u0000${key}`;
}

/**
 * The rows of each group among `rows`, each group's in the order of `rows`, the groups in the
 * order their first row comes; the rows whose index is in `skip` left out.
 */
export function groupRows(
  rows: readonly OutboxRow[],
  skip: ReadonlySet<number>,
): Map<string, OutboxRow[]> {
  const groups = new Map<string, OutboxRow[]>();
  for (const [i, row] of rows.entries()) {
    if (skip.has(i)) continue;
    const name = groupName(row.record);
    const group = groups.get(name);
    if (group === undefined) groups.set(name, [row]);
    else group.push(row);
  }
  return groups;
}
