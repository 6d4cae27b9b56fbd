// Cron jobs another runtime's cron runs: `Deno.cron`, which reads five fields in UTC, and an edge
// runtime's trigger (Cloudflare's, read in UTC, its days of the week numbered from 1 for Sunday).
import type { CronJob } from "./job_spec.ts";

/** `Deno.cron`, where the runtime has it (Deno Deploy; the Deno CLI with `--unstable-cron`). */
export type DenoCron = (
  name: string,
  schedule: string,
  options: { signal: AbortSignal },
  handler: () => Promise<void>,
) => Promise<void>;

/** The runtime's `Deno.cron`; `null` where it has none. */
export function runtimeDenoCron(): DenoCron | null {
  const cron = (globalThis as { Deno?: { cron?: unknown } }).Deno?.cron;
  return typeof cron === "function" ? cron as DenoCron : null;
}

const UTC: readonly string[] = ["UTC", "Etc/UTC", "GMT", "Etc/GMT"];

/**
 * What `Deno.cron` can run as the job has it: five fields in UTC, the job's zone or, when it has
 * none, the runtime's (UTC on Deno Deploy); `undefined` when it cannot.
 */
export function denoSchedule(job: CronJob): string | undefined {
  // Deno.cron counts the days of the week from 1 for Sunday, croner and Spring from 0: only a
  // job that runs every day of the week is handed over.
  const zone = job.zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!UTC.includes(zone)) return undefined;
  const fields = job.trigger.expression.split(" ");
  if (fields.length === 6 && fields[0] === "0") fields.shift();
  return fields.length === 5 && fields[4] === "*" && fields.every((f) => /^[\d*,\-/]+$/.test(f))
    ? fields.join(" ")
    : undefined;
}

/**
 * Why an edge runtime's cron trigger would not run `job` when the job says; `undefined` when it
 * reads the job as Thaw does.
 */
export function readsOtherwise(job: CronJob): string | undefined {
  if (job.zone !== undefined && !UTC.includes(job.zone)) {
    return `the job's zone is ${job.zone}, and cron triggers are in UTC: leave the zone out and ` +
      "write the trigger and the job in UTC";
  }
  const dayOfWeek = job.trigger.expression.split(" ").at(-1) ?? "";
  if (/\d/.test(dayOfWeek.replace(/#\d+/g, ""))) {
    return `its day of week "${dayOfWeek}" is in numbers, which Cloudflare counts from 1 for ` +
      "Sunday and Thaw, as Spring, from 0: name the days (MON-FRI) in both";
  }
  return undefined;
}
