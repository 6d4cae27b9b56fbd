// The processes of the lock managers' tests across processes (tests/fixtures/tasks/
// lock_contender.ts), and the replay of what they recorded.
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { after } from "node:test";
import { scriptCommand } from "../runtime.ts";

const CONTENDER = fileURLToPath(new URL("../fixtures/tasks/lock_contender.ts", import.meta.url));

/** Replays enter/exit per key, in the store's order: one holder at a time, every run whole. */
export function assertNoOverlap(
  events: readonly { k: string; who: string; event: string }[],
  keys: readonly string[],
  runsPerKey: number,
): void {
  for (const key of keys) {
    let inside: string | undefined;
    let runs = 0;
    for (const { who, event } of events.filter((e) => e.k === key)) {
      const [what, round] = event.split(" ");
      const run = `${who} ${round}`;
      if (what === "enter") {
        assert.equal(inside, undefined, `${run} entered ${key} while ${inside} held it`);
        inside = run;
      } else {
        assert.equal(inside, run, `${run} left ${key}, held by ${inside}`);
        inside = undefined;
        runs++;
      }
    }
    assert.equal(runs, runsPerKey, `runs of ${key}`);
  }
}

/**
 * Lets contenders go once every one is ready (connected, its manager made), so that they contend
 * from their first taking rather than each run alone as the others start; waits until all end.
 */
export async function startTogether(contenders: readonly Contender[]): Promise<void> {
  for (const c of contenders) await c.printed("ready");
  for (const c of contenders) c.child.stdin.write("go\n");
  for (const c of contenders) await c.done();
}

interface Contender {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  printed(line: string): Promise<void>;
  done(): Promise<void>;
}

/** A process of tests/fixtures/tasks/lock_contender.ts; killed after the suite if still running. */
export function contender(name: string, env: Record<string, string>): Contender {
  const [command, args] = scriptCommand(CONTENDER);
  const child = spawn(command, args, {
    env: { ...process.env, NO_COLOR: "1", ...env, LOCK_NAME: name },
  });
  let out = "", err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  after(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, "SIGKILL");
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => out += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => err += chunk);
  const printed = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!out.split("\n").includes(line)) return;
        child.stdout.off("data", check);
        resolve();
      };
      child.stdout.on("data", check);
      check();
      exited.then((code) =>
        reject(new Error(`${name} exited (${code}) before printing "${line}":\n${out}\n${err}`))
      );
    });
  return {
    child,
    exited,
    printed,
    done: async () => {
      const code = await exited;
      assert.equal(code, 0, `${name} exited ${code}:\n${out}\n${err}`);
    },
  };
}
