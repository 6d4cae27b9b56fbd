// @Scheduled jobs of an app served by listen(app), in a real process on the runtime running the
// suite (tests/fixtures/scheduling/served_app.ts): bootstrap starts none, listen starts them, and
// SIGTERM's graceful shutdown stops them, waits for a run in progress within
// server.shutdown-timeout, and runs nothing after. The test waits on the lines the app prints.
import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { scriptCommand } from "../runtime.ts";
import { watchChild, type WatchedChild } from "../child_output.ts";
import { untilRefused } from "../runtime/raw_client.ts";

const APP = fileURLToPath(new URL("../fixtures/scheduling/served_app.ts", import.meta.url));

interface Served extends WatchedChild {
  lines(): string[];
  /** The lines of the job's runs and of its bean's @PreDestroy, in order. */
  events(): string[];
}

let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill("SIGKILL");
  running = undefined;
});

function start(
  mode: "release" | "hang" | "disabled" | "cron",
  shutdownTimeout: number,
  denoFlags?: string[],
): Served {
  const watched = watchChild(...scriptCommand(APP, [mode, String(shutdownTimeout)], denoFlags));
  running = watched.child;
  const lines = () => watched.stdout().split("\n");
  return {
    ...watched,
    lines: () => lines().filter((l) => l !== ""),
    events: () => lines().filter((l) => /^(run (start|end) \d+|beans closed)$/.test(l)),
  };
}

// Sent by pid: Deno's `ChildProcess.kill` reports the child as ended by the signal it sent,
// whatever code the child then exits with.
function terminate(served: Served): void {
  process.kill(served.child.pid!, "SIGTERM");
}

async function port(served: Served): Promise<number> {
  return Number(new URL((await served.line(/^listening /)).split(" ")[1]).port);
}

describe("@Scheduled jobs of an app served by listen(app)", () => {
  it("bootstrap starts no job; listen(app) starts it once the server is up", async () => {
    const served = start("release", 30);
    const after = await served.line(/^runs after listen: \d+$/);
    assert.notEqual(after, "runs after listen: 0", "listen(app) started the job");
    await served.line(/^run end 2$/);
    const lines = served.lines();
    assert.equal(lines[0], "bootstrapped, runs before listen: 0", lines.join("\n"));
    assert.ok(lines.indexOf("listen now") < lines.indexOf("run start 1"), lines.join("\n"));
    assert.deepEqual(served.events().slice(0, 4), [
      "run start 1",
      "run end 1",
      "run start 2",
      "run end 2",
    ]);
    assert.equal(served.stderr(), "");
  });

  it("SIGTERM during a run: waits for it to end, starts no other, closes the beans, exits 0", async () => {
    const served = start("release", 30);
    const listening = await port(served);
    await served.line(/^run start 3$/);
    terminate(served);
    // The server has stopped: the shutdown is under way, with the run still going.
    await untilRefused(listening);
    assert.ok(!served.lines().includes("run end 3"), served.lines().join("\n"));
    served.child.stdin!.write("release\n");
    assert.equal(await served.exited, 0, served.stderr());
    assert.deepEqual(served.events().slice(4), ["run start 3", "run end 3", "beans closed"]);
    assert.equal(served.stderr(), "");
  });

  it("a run past server.shutdown-timeout: named in the log, the beans close, the process exits 1", async () => {
    const served = start("hang", 1);
    await served.line(/^run start 3$/);
    terminate(served);
    // A run cut short is a shutdown that did not end cleanly, as a request cut short is.
    assert.equal(await served.exited, 1, served.stderr());
    assert.match(
      served.stderr(),
      /@Scheduled Jobs\.work still running after server\.shutdown-timeout \(1 s\); the beans were stopped all the same/,
    );
    assert.deepEqual(served.events().slice(4), ["run start 3", "beans closed"]);
  });

  it("thaw.scheduling.enabled: false: listen(app) starts no job", async () => {
    const served = start("disabled", 30);
    assert.equal(await served.line(/^runs after listen: \d+$/), "runs after listen: 0");
    terminate(served);
    assert.equal(await served.exited, 0, served.stderr());
    assert.deepEqual(served.events(), ["beans closed"], served.lines().join("\n"));
    assert.equal(served.stderr(), "");
  });

  // On Deno, with `Deno.cron` (--unstable-cron, as on Deno Deploy), the scheduler hands the cron
  // job to it; on Bun and Node the flag is not passed, and the job is on a timer.
  it("a cron job: listen(app) serves, and SIGTERM ends the process cleanly", async () => {
    const served = start("cron", 30, ["-A", "--unstable-cron"]);
    await served.line(/^runs after listen: 0$/);
    terminate(served);
    assert.equal(await served.exited, 0, served.stderr());
    assert.deepEqual(served.events(), ["beans closed"], served.lines().join("\n"));
    assert.equal(served.stderr(), "");
  });
});
