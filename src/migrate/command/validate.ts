import type { ConnectionReport, FileReport, RunError, RunReport } from "../run_report.ts";
import { flywayRefusal, flywayRefusals, type MigrationCommand } from "./command.ts";
import { status } from "./status.ts";

/**
 * `validate`: what `status` reads, as a check that fails. It fails on run-once files changed
 * after they ran, under `flyway_compatible` on any applied versioned file edited or gone, under
 * strict order on files out of order and on two files of one resource, and with `--drift` on
 * resources that differ from their files, naming them all, on every connection. Writes nothing.
 */
export const validate: MigrationCommand = { ...status, name: "validate", verdict: invalidFiles };

function invalidFiles(report: RunReport): RunError | undefined {
  const found = (
    test: (f: FileReport, c: ConnectionReport) => boolean,
    text: (f: FileReport) => string,
  ) =>
    report.connections.flatMap((c) =>
      c.files.filter((f) => test(f, c)).map((f) => ({
        connection: c.name,
        file: f.path,
        text: `${c.name}: ${text(f)}`,
      }))
    );
  const changed = found((f) => f.action === "changed", (f) => f.path);
  const unfinished = found((f) => f.inProgress === true, (f) => f.path);
  // Under flyway_compatible, what migrate refuses: edited declarative files and missing ones too.
  const flyway = report.connections.flatMap((c) =>
    c.validateOnMigrate === true
      ? flywayRefusals(c.files).filter((f) => f.action !== "changed").map((f) => ({
        connection: c.name,
        file: f.path,
        text: `${c.name}: ${f.path} ${flywayRefusal(f)}`,
      }))
      : []
  );
  const late = found(
    (f, c) => c.strictOrder === true && f.outOfOrder !== undefined,
    (f) => `${f.path} before ${f.outOfOrder}`,
  );
  const twice = found(
    (f, c) => c.strictOrder === true && f.sameResourceAs !== undefined,
    (f) => `${f.path} and ${f.sameResourceAs}`,
  );
  // `--drift`: each resource that differs from its file, with its first difference.
  const drifted = report.connections.flatMap((c) =>
    (c.drift?.resources ?? []).map((r) => ({
      reapply: r.reapply,
      connection: c.name,
      file: r.file,
      text: `${c.name}: ${r.resource} (${r.differences[0]}${
        r.differences.length > 1 ? `, and ${r.differences.length - 1} more` : ""
      }${r.reapply || r.note === undefined ? "" : `; ${r.note}`})`,
    }))
  );
  const first = unfinished[0] ?? changed[0] ?? flyway[0] ?? late[0] ?? twice[0] ?? drifted[0];
  if (first === undefined) return undefined;
  const list = (items: { text: string }[]) => items.map((i) => i.text).join(", ");
  const why = [
    unfinished.length > 0 &&
    `files were begun by a run that never ended (${list(unfinished)}); what ran of them may be ` +
      `committed: fix the database by hand, then run "repair", which drops their marks`,
    changed.length > 0 &&
    `run-once files were changed after they ran (${list(changed)}); restore them and put ` +
      `changes in new files, or record them as they are with "repair"`,
    flyway.length > 0 &&
    `under flyway_compatible, applied files were edited or are gone (${list(flyway)}); ` +
      `restore them, or record them as they are with "repair"`,
    late.length > 0 &&
    `files are out of order under strict order (${list(late)}); rename them to sort after the ` +
      `applied ones`,
    twice.length > 0 &&
    `files define one resource twice under strict order (${
      list(twice)
    }); keep one file per resource`,
    drifted.some((d) => d.reapply) &&
    `the cluster differs from the applied files (${
      list(drifted.filter((d) => d.reapply))
    }); apply the files again with "migrate --drift", or put the change in a new file`,
    drifted.some((d) => !d.reapply) &&
    `the cluster differs from the applied files in what is not applied again (${
      list(drifted.filter((d) => !d.reapply))
    }); each says why`,
  ].filter(Boolean).join("; ");
  return { kind: "invalid", message: why, connection: first.connection, file: first.file };
}
