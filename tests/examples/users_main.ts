// The sample users app as its users run it: examples/users/main.ts started as `npm start` starts it
// (on Deno with the permissions package.json grants; on Bun and Node as their users would), and
// the dev token tool `npm run token` runs.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { scriptCommand } from "../runtime.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const main = join(root, "examples/users/main.ts");

/**
 * The Deno flags of the npm script `name` (`deno run <flags> <file>`), read from package.json, and
 * its file: the tests grant exactly those.
 */
async function scriptOf(name: string, file: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
  const words = (pkg.scripts[name] as string).split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"]);
  assert.equal(words.at(-1), file);
  return words.slice(2, -1);
}

/** The Deno flags of `npm start`, read from package.json: the test grants exactly those. */
export function startFlags(): Promise<string[]> {
  return scriptOf("start", "examples/users/main.ts");
}

export interface Ended {
  readonly code: number | null;
  readonly signal: string | null;
}

export interface Started {
  readonly url: string;
  readonly port: number;
  /** Everything it printed until it listened. */
  readonly output: string;
  /** Sends SIGTERM, as a process manager stops a service. */
  terminate(): void;
  /** How the process ended, once it has. */
  readonly ended: Promise<Ended>;
  /** SIGTERM, then the end, which must be exit code 0; what it printed after it listened. */
  stop(): Promise<string>;
}

/**
 * Starts main.ts as `npm start` does (on Deno with its permissions; Bun and Node as their users
 * would), in `cwd`, so the default database `./data/users.db` lands there; `extraEnv` on top of
 * this process's environment (a profile, a database URL).
 */
export async function start(
  cwd: string,
  port: number,
  extraEnv: Record<string, string> = {},
): Promise<Started> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    NO_COLOR: "1",
  };
  delete env.USERS_DB;
  Object.assign(env, extraEnv);
  const child = spawn(...scriptCommand(main, [], await startFlags()), {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let over = false;
  const ended = new Promise<Ended>((resolve) =>
    child.once("close", (code, signal) => {
      over = true;
      resolve({ code, signal });
    })
  );
  const [url, pid] = await new Promise<[string, number]>((resolve, reject) => {
    // A give-up only, paid when the child never starts: a loaded machine may take many seconds.
    const timer = setTimeout(() => reject(new Error(`no start within 60 s: ${out}`)), 60_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const match =
        /Thaw listening on (http:\/\/\S+)(?: \([^)]*\))? — [^\n]+\n(?:[^\n]*\n)*?users app: pid (\d+)\n/
          .exec(out);
      if (match) {
        clearTimeout(timer);
        resolve([match[1], Number(match[2])]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${out}`));
    });
  }).catch((error) => {
    child.kill("SIGTERM");
    throw error;
  });
  // What the README has users signal: the process that serves, not a wrapper around it.
  assert.equal(pid, child.pid, out);
  const listened = out.length;
  // By pid: Deno's `ChildProcess.kill` reports the child as ended by the signal it sent,
  // whatever code the child then exits with.
  const terminate = () => {
    if (!over) process.kill(child.pid!, "SIGTERM");
  };
  // The line names the address bound (every interface: 0.0.0.0); a client calls it localhost.
  const bound = Number(new URL(url).port);
  return {
    url: `http://localhost:${bound}`,
    port: bound,
    output: out,
    terminate,
    ended,
    stop: async () => {
      terminate();
      // listen() turns SIGTERM into a graceful shutdown, which ends the process itself.
      assert.deepEqual(await ended, { code: 0, signal: null }, out);
      return out.slice(listened);
    },
  };
}

/** Runs main.ts to its end (it is expected to stop), as start() would start it. */
export function runToEnd(
  cwd: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return startFlags().then((flags) =>
    new Promise((resolve) => {
      const child = spawn(...scriptCommand(main, [], flags), {
        cwd,
        env: { ...process.env, NO_COLOR: "1", PORT: "0", ...extraEnv },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "", err = "";
      child.stdout.on("data", (chunk) => out += chunk);
      child.stderr.on("data", (chunk) => err += chunk);
      child.on("close", (code) => resolve({ code, out, err }));
    })
  );
}

/**
 * DEV ONLY: what `npm run token -- <args>` prints, run as npm runs it (from the repository root,
 * on Deno with the script's flags; Bun and Node run the same file): a token the app's dev profile
 * accepts.
 */
export async function tokenFromTool(args: readonly string[] = []): Promise<string> {
  const file = "examples/users/dev/token.ts";
  const flags = await scriptOf("token", file);
  return await new Promise((resolve, reject) => {
    const child = spawn(...scriptCommand(join(root, file), args, flags), {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "", err = "";
    child.stdout.on("data", (chunk) => out += chunk);
    child.stderr.on("data", (chunk) => err += chunk);
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(out.trim());
      else reject(new Error(`${file} exited with ${code}: ${out}${err}`));
    });
  });
}
