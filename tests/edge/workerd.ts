// workerd (Cloudflare's runtime, from npm) for the edge tests: its binary, and a wait until a worker
// it serves answers.
import type { ChildProcess } from "node:child_process";
import { createRequire } from "node:module";

/** The binary the workerd package installs for this platform. */
export const WORKERD: string = createRequire(import.meta.url)("workerd").default;

/**
 * Resolves once `url` answers, whatever the status; rejects when workerd exits first (with its
 * output, `log()`) or when nothing answers within 10 s.
 */
export async function until(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`workerd exited ${child.exitCode}: ${log()}`);
    try {
      await (await fetch(url)).body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`workerd did not answer at ${url} within 10 s: ${log()}`);
}
