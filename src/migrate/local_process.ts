import { hostname } from "node:os";
import process from "node:process";
import type { RunnerIdentity } from "./runner_identity.ts";
import { definedFields } from "../defined_fields.ts";

/**
 * Whether no process `pid` runs on this machine: `kill(pid, 0)` sends nothing and fails with
 * ESRCH only when there is none. Anything else (EPERM: it exists under another user; Deno
 * without `--allow-run`) is not proof, and the answer is false.
 */
export function processGone(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "ESRCH";
  }
}

/**
 * This process as a runner: the machine's host name, the pid and the user (`$USER`, `$LOGNAME` or
 * `$USERNAME`), which SQL records as `user@host`. Under Deno it needs `--allow-sys=hostname` and
 * `--allow-env` for those variables.
 */
export function localIdentity(): RunnerIdentity {
  const user = process.env.USER ?? process.env.LOGNAME ?? process.env.USERNAME;
  return {
    host: hostname(),
    pid: process.pid,
    ...definedFields({ user }),
    processGone,
  };
}
