// A redis-server of a test file's own, on a free loopback port (no persistence), which the tests
// stop, freeze and restart themselves; and waits on a state, bounded against one that never
// comes. A redis-server that is missing fails the suite, saying how to install it.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import process from "node:process";
import { createClient } from "redis";
import { freePort } from "../helpers.ts";

const REDIS_SERVER = "redis-server";
// Waits on a state, not a clock: `check` until it holds, bounded only against one that never
// comes (far past any loaded machine's restart).
export async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!await bounded(check(), 5_000).catch(() => false)) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A check that never settles (a PING to a port something else took, which never answers) is
// one that failed: the loop asks again, and its deadline still counts.
export function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A redis-server of this file's own, on a loopback port, with nothing saved to disk. */
export class RedisServer {
  #process: ChildProcess | undefined;
  #exited: Promise<unknown> = Promise.resolve();

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  /** Starts it (again, on the same port) and waits until it answers PING. */
  async restart(): Promise<void> {
    const child = spawn(REDIS_SERVER, [
      "--port",
      String(this.port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (error) =>
        reject(
          new Error(
            `${REDIS_SERVER} must be installed (npm test installs it: tools/system_packages.sh)`,
            { cause: error },
          ),
        ));
      child.once(
        "exit",
        (code) =>
          reject(new Error(`${REDIS_SERVER} exited (${code}) before it answered: ${stderr}`)),
      );
    });
    failed.catch(() => {});
    this.#process = child;
    this.#exited = once(child, "exit");
    await Promise.race([failed, until(`${REDIS_SERVER} on ${this.port}`, () => this.ping())]);
  }

  // Signals go through process.kill: Deno's ChildProcess.kill sends none after its first.
  #signal(signal: NodeJS.Signals): void {
    process.kill(this.#process!.pid!, signal);
  }

  /** Kills it with SIGKILL, as a crash would, and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.#process?.exitCode === null && this.#process.signalCode === null) {
      this.#signal("SIGKILL");
    }
    await this.#exited;
  }

  /** Freezes it (SIGSTOP): connections stay open, and nothing answers. */
  freeze(): void {
    this.#signal("SIGSTOP");
  }

  thaw(): void {
    this.#signal("SIGCONT");
  }

  async ping(): Promise<boolean> {
    const client = createClient({ url: this.url, RESP: 2, socket: { reconnectStrategy: false } });
    client.on("error", () => {});
    try {
      return await bounded(
        (async () => {
          await client.connect();
          return await client.ping() === "PONG";
        })(),
        5_000,
      );
    } finally {
      client.destroy();
    }
  }
}
