import process from "node:process";

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
