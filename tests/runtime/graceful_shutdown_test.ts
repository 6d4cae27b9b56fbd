// Graceful shutdown over real sockets and real signals, on the runtime running the suite: a
// child process serves tests/fixtures/shutdown_app.ts, and the test sends it SIGTERM.
import { afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "node:net";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { bootstrap, Component, GetMapping, PreDestroy, RestController } from "../../mod.ts";
import { listen } from "../../server.ts";
import { scriptCommand } from "../runtime.ts";
import { watchChild, type WatchedChild } from "../child_output.ts";
import { keptAlive, refused, until, untilRefused } from "./raw_client.ts";
import { actuator } from "../../actuator.ts";
import { tempDir } from "../temp_dir.ts";

const APP = fileURLToPath(new URL("../fixtures/shutdown_app.ts", import.meta.url));
const SSE_APP = fileURLToPath(new URL("../fixtures/sse_finally_app.ts", import.meta.url));

interface Service extends WatchedChild {
  readonly port: number;
}

let running: ChildProcess | undefined;
afterEach(() => {
  running?.kill("SIGKILL");
  running = undefined;
});

async function start(shutdownTimeout: number, uploads?: string): Promise<Service> {
  const args = [String(shutdownTimeout), ...(uploads === undefined ? [] : [uploads])];
  const watched = watchChild(...scriptCommand(APP, args));
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

  // Bun answered such a request 400 in some runs (4 of 8, 6 of 11 and 9 of 16 in three outside
  // looks): one run proves little, so it runs 8 times, each in a process of its own.
  it("closes the connections idle at the signal unanswered, whenever a request comes on one (8 runs)", async () => {
    for (let run = 0; run < 8; run++) await idleAtTheSignal(run);
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
    // A timeout the child's own work must beat, however loaded the machine: it is not under test.
    const service = await start(30);
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

  it("deletes the temporary file of an upload it cuts, on every runtime", async () => {
    await using uploads = await tempDir("thaw-shutdown-uploads-");
    const service = await start(1, uploads.path);
    // A file part that stops arriving half-way: its first bytes are on disk, the rest never come.
    const socket = connect(service.port, "127.0.0.1");
    socket.on("error", () => {});
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(
      "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n" +
        "Content-Length: 1000000\r\n\r\n--B\r\n" +
        'Content-Disposition: form-data; name="f"; filename="a.bin"\r\n\r\n' +
        "x".repeat(100_000),
    );
    await until(async () => (await readdir(uploads.path)).length === 1, "the upload's file exists");
    signal(service);
    assert.equal(await service.exited, 1, service.stderr());
    assert.match(service.stderr(), /were cut: POST \/upload/);
    assert.deepEqual(await readdir(uploads.path), [], "no temporary file is left");
    socket.destroy();
    await closed;
  });

  it("runs an event stream's finally, an await in it, before the process ends", async () => {
    await using folder = await tempDir("thaw-sse-finally-");
    const marker = join(folder.path, "cleaned");
    const watched = watchChild(...scriptCommand(SSE_APP, [marker]));
    running = watched.child;
    const port = Number((await watched.line(/^listening \d+$/)).split(" ")[1]);
    const events = keptAlive(port);
    await events.connected;
    events.send("/events");
    await until(() => Promise.resolve(events.received().includes("data: tick 1")), "two ticks");
    process.kill(watched.child.pid!, "SIGTERM");
    assert.equal(await watched.exited, 0, watched.stderr());
    assert.equal(await readFile(marker, "utf8").catch(() => "no marker"), "cleaned up");
    events.destroy();
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
  // Bun answered such a request 400 in 3 of 10 runs of an outside review: one run proves little.
  // A request in flight keeps the server draining while the requests on the idle ones come.
  it("closes kept-alive connections idle as it starts unanswered, a request sent on each after (20 runs)", async () => {
    for (let run = 0; run < 20; run++) {
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => entered = resolve);
      let release!: () => void;
      const released = new Promise<void>((resolve) => release = resolve);

      @RestController()
      class Hello {
        @GetMapping("/hello")
        hello(): string {
          return "hello";
        }

        @GetMapping("/slow")
        async slow(): Promise<string> {
          entered();
          await released;
          return "slow";
        }
      }

      const app = await bootstrap({ controllers: [Hello] });
      const server = await listen(app, {
        port: 0,
        hostname: "127.0.0.1",
        signals: false,
        quiet: true,
      });
      // Idle after an answer, and idle from the start (a client's preconnection).
      const idle = await Promise.all(Array.from({ length: 6 }, async (_, i) => {
        const connection = keptAlive(server.port);
        await connection.connected;
        if (i % 2 === 0) {
          connection.send("/hello");
          assert.match((await connection.answers(1))[0], /^HTTP\/1\.1 200/);
        }
        return connection;
      }));
      const answered = idle.map((connection) => connection.received().length);
      const slow = fetch(`${server.url}/slow`);
      await inside;
      const closed = server.close();
      for (const connection of idle) connection.send("/hello");
      await Promise.all(idle.map((connection) => connection.closedByServer()));
      idle.forEach((connection, i) => {
        // Nothing: a request that got no answer never ran, and the client retries it elsewhere.
        const after = connection.received().slice(answered[i]);
        assert.equal(after, "", `run ${run}, connection ${i}`);
      });
      release();
      assert.equal(await (await slow).text(), "slow");
      await closed;
    }
  });

  it("with server.shutdown-delay, serves on with readiness DOWN for that long, then stops accepting", async () => {
    @RestController()
    class Hello {
      @GetMapping("/hello")
      hello(): string {
        return "hello";
      }
    }

    // The delay must hold two requests and a connection attempt on a loaded machine: the test
    // waits all of it once.
    const app = await bootstrap({
      controllers: [Hello],
      actuator: actuator(),
      config: { server: { "shutdown-delay": 10 } },
    });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    const closed = server.close();
    const readiness = await fetch(`${server.url}/actuator/health/readiness`);
    assert.equal(readiness.status, 503);
    assert.deepEqual(await readiness.json(), { status: "DOWN" });
    const hello = await fetch(`${server.url}/hello`);
    assert.equal(hello.status, 200);
    assert.equal(await hello.text(), "hello");
    // A client kept on this instance reconnects, and the balancer sends it elsewhere.
    assert.equal(hello.headers.get("connection"), "close");
    assert.equal(await refused(server.port), false, "still accepting during the delay");
    await closed;
    assert.equal(await refused(server.port), true, "no longer accepting once closed");
  });

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

// One run of the idle-connections case: 24 kept-alive connections idle at SIGTERM (two thirds after
// an answer, a third never used), a request sent on each, half racing the signal and half once the
// server no longer accepts: each gets nothing or its own answer, never a refusal.
async function idleAtTheSignal(run: number): Promise<void> {
  const service = await start(30);
  // Idle after an answer, and idle from the start (a client's preconnection).
  const idle = await Promise.all(Array.from({ length: 24 }, async (_, i) => {
    const connection = keptAlive(service.port);
    await connection.connected;
    if (i % 3 !== 0) {
      connection.send("/fast");
      await connection.answers(1);
    }
    return connection;
  }));
  const answered = idle.map((connection) => connection.received().length);
  // A request in flight keeps the drain, and the process, going while the others come.
  const slow = fetch(`http://127.0.0.1:${service.port}/slow`);
  await service.line(/^slow started$/);
  signal(service);
  // Half race the signal; half come once the server no longer accepts.
  for (const connection of idle.slice(0, 12)) connection.send("/fast");
  await untilRefused(service.port);
  for (const connection of idle.slice(12)) connection.send("/fast");
  await Promise.all(idle.map((connection) => connection.closedByServer()));
  idle.forEach((connection, i) => {
    // Nothing (the client may retry it elsewhere), or the request's own answer: never a refusal.
    const after = connection.received().slice(answered[i]);
    // (Its body may be chunked: once the drain starts, an answer is a copy saying it closes.)
    assert.match(
      after,
      /^$|^HTTP\/1\.1 200 [^]*\r\n\r\n(4\r\n)?fast(\r\n0\r\n\r\n)?$/,
      `run ${run}, connection ${i}: ${after}`,
    );
  });
  service.child.stdin!.write("release\n");
  assert.equal((await slow).status, 200);
  assert.equal(await service.exited, 0, service.stderr());
}
