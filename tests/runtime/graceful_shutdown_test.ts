// Graceful shutdown over real sockets and real signals, on the runtime running the suite: a
// child process serves tests/fixtures/shutdown_app.ts, and the test sends it SIGTERM.
import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { bootstrap, Component, GetMapping, PreDestroy, RestController } from "../../mod.ts";
import { listen } from "../../server.ts";
import { scriptCommand } from "../runtime.ts";
import { watchChild, type WatchedChild } from "../child_output.ts";
import { keptAlive, untilRefused } from "./raw_client.ts";
import { actuator } from "../../actuator.ts";

const APP = fileURLToPath(new URL("../fixtures/shutdown_app.ts", import.meta.url));

interface Service extends WatchedChild {
  readonly port: number;
}

let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill("SIGKILL");
  running = undefined;
});

async function start(shutdownTimeout: number): Promise<Service> {
  const watched = watchChild(...scriptCommand(APP, [String(shutdownTimeout)]));
  running = watched.child;
  const listening = await watched.line(/^listening \d+$/);
  return { ...watched, port: Number(listening.split(" ")[1]) };
}

// Sent by pid: Deno's `ChildProcess.kill` reports the child as ended by the signal it sent,
// whatever code the child then exits with.
function signal(service: Service): void {
  process.kill(service.child.pid!, "SIGTERM");
}

describe("graceful shutdown on SIGTERM", () => {
  it("finishes the request in flight, refuses new connections, closes idle ones, exits 0", async () => {
    const service = await start(30);
    const idle = keptAlive(service.port);
    await idle.connected;
    idle.send("/fast");
    assert.match((await idle.answers(1))[0], /^HTTP\/1\.1 200/);
    const slow = fetch(`http://127.0.0.1:${service.port}/slow`);
    await service.line(/^slow started$/);
    signal(service);
    await untilRefused(service.port);
    service.child.stdin!.write("release\n");
    const answer = await slow;
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), "slow done");
    assert.equal(await service.exited, 0, service.stderr());
    await idle.closedByServer();
    assert.equal(service.stderr(), "");
    assert.equal(service.stdout().match(/^pool closed$/gm)?.length, 1, "@PreDestroy ran once");
  });

  it("answers on a kept-alive connection busy at the signal with Connection: close, then closes it", async () => {
    const service = await start(30);
    const busy = keptAlive(service.port);
    await busy.connected;
    busy.send("/fast");
    assert.doesNotMatch((await busy.answers(1))[0], /\r\nconnection: close\r\n/i);
    busy.send("/slow");
    await service.line(/^slow started$/);
    signal(service);
    await untilRefused(service.port);
    service.child.stdin!.write("release\n");
    const slow = (await busy.answers(2))[1];
    assert.match(slow, /^HTTP\/1\.1 200/);
    assert.match(slow, /\r\nconnection: close\r\n/i);
    assert.match(slow, /\r\n\r\nslow done$/);
    await busy.closedByServer();
    assert.equal(await service.exited, 0, service.stderr());
  });

  it("ends cleanly when an answer being streamed at the signal finishes within the timeout", async () => {
    const service = await start(5);
    // A client that keeps its connection: the server must close it once the answer is done.
    const streaming = keptAlive(service.port);
    await streaming.connected;
    streaming.send("/stream");
    await service.line(/^stream started$/);
    signal(service);
    await untilRefused(service.port);
    service.child.stdin!.write("release\n");
    assert.match((await streaming.answers(1))[0], /\r\n\r\nfirst last$/);
    await streaming.closedByServer();
    assert.equal(await service.exited, 0, service.stderr());
    assert.equal(service.stderr(), "");
  });

  it("cuts a request that outlives server.shutdown-timeout, names it, and exits 1", async () => {
    const service = await start(1);
    const hung = fetch(`http://127.0.0.1:${service.port}/hang`).then(
      (response) => response.text(),
      (error: Error) => error,
    );
    await service.line(/^hang started$/);
    signal(service);
    assert.equal(await service.exited, 1);
    assert.match(service.stderr(), /requests still running after 1000 ms were cut: GET \/hang/);
    assert.equal(service.stdout().match(/^pool closed$/gm)?.length, 1, "@PreDestroy ran once");
    assert.ok(await hung instanceof Error, "the hung request was cut");
  });

  it("ends at once with 1 on a second signal", async () => {
    const service = await start(30);
    const hung = fetch(`http://127.0.0.1:${service.port}/hang`).catch((error: Error) => error);
    await service.line(/^hang started$/);
    signal(service);
    await untilRefused(service.port);
    signal(service);
    assert.equal(await service.exited, 1);
    assert.ok(await hung instanceof Error);
  });
});

describe("server.close()", () => {
  it("turns readiness DOWN, lets the request in flight finish, then runs @PreDestroy once", async () => {
    const events: string[] = [];
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => entered = resolve);
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);

    @Component()
    class Store {
      @PreDestroy()
      close(): void {
        events.push("store closed");
      }
    }

    @RestController()
    class Slow {
      @GetMapping("/slow")
      async slow(): Promise<string> {
        entered();
        await released;
        events.push("slow answered");
        return "done";
      }
    }

    const app = await bootstrap({ controllers: [Slow], components: [Store], actuator: actuator() });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    const readiness = () => app.fetch(new Request("http://x/actuator/health/readiness"));
    assert.equal((await readiness()).status, 200);
    const slow = fetch(`${server.url}/slow`);
    await inside;
    const closed = server.close();
    const down = await readiness();
    assert.equal(down.status, 503);
    assert.deepEqual(await down.json(), { status: "DOWN" });
    await untilRefused(server.port);
    assert.deepEqual(events, [], "nothing stopped while the request runs");
    release();
    const answer = await slow;
    assert.equal(await answer.text(), "done");
    assert.equal(answer.headers.get("connection"), "close");
    await closed;
    assert.deepEqual(events, ["slow answered", "store closed"]);
    assert.equal(server.close(), server.close(), "the same promise again");
    await server.close();
    assert.deepEqual(events, ["slow answered", "store closed"]);
  });
});
