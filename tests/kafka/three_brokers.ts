// The three-broker cluster `tools/kafka.sh start-cluster` runs, for the tests that kill a broker
// (`kill -9`) and start it again on its data: those tests run apart from the others that use it
// (tools/unit_tests.ts puts every file reaching this one in the `cluster` part).
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The cluster's brokers. */
export const KAFKA_CLUSTER: readonly string[] = [
  "127.0.0.1:9192",
  "127.0.0.1:9193",
  "127.0.0.1:9194",
];

const script = fileURLToPath(new URL("../../tools/kafka.sh", import.meta.url));

// The script's own waits are bounded (30 s for a kill, 300 s for a start): past these, it is ended,
// so that a script stuck elsewhere (its lock) fails the test rather than outliving it.
const KILL_MS = 60_000;
const RESTART_MS = 360_000;

/** Kills the broker on `port` with SIGKILL: a crash, not a shutdown. */
export async function killBroker(port: number): Promise<void> {
  await promisify(execFile)("bash", [script, "kill-node", String(port)], { timeout: KILL_MS });
}

/** Starts the broker on `port` again on its data, and waits until it answers. */
export async function restartBroker(port: number): Promise<void> {
  await promisify(execFile)("bash", [script, "restart-node", String(port)], {
    maxBuffer: 1 << 20,
    timeout: RESTART_MS,
  });
}

/** Stops the broker on `port` with SIGSTOP: it keeps its connections and answers nothing. */
export async function pauseBroker(port: number): Promise<void> {
  await promisify(execFile)("bash", [script, "pause-node", String(port)]);
}

/** Wakes the broker on `port` that {@linkcode pauseBroker} stopped (SIGCONT). */
export async function resumeBroker(port: number): Promise<void> {
  await promisify(execFile)("bash", [script, "resume-node", String(port)]);
}

/**
 * Wakes each broker of the cluster that is stopped, starts again each that does not answer, and
 * waits until it does: a run killed between a test's kill (or pause) and its restart must not leave
 * the next one a broker short.
 */
export async function wholeCluster(): Promise<void> {
  for (const address of KAFKA_CLUSTER) await restartBroker(Number(address.split(":")[1]));
}
