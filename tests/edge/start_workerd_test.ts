// startWorkerd: a port taken between finding it free and workerd binding it is retried.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, createServer } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../helpers.ts";
import { startWorkerd, until } from "./workerd.ts";
import { suiteTempDirs } from "../temp_dir.ts";

const WORKER = 'export default { fetch: () => new Response("up") };\n';
const CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .main)],
  sockets = [(name = "main", address = "127.0.0.1:0", http = (), service = "main")],
);
const main :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "worker.js")],
  compatibilityDate = "2026-10-23",
);
`;

describe("startWorkerd", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(() => Promise.all(cleanups.map((c) => c())));
  // Registered after the cleanups, so that the folder goes after them.
  const suiteDir = suiteTempDirs();

  it("starts workerd again on another port when the first was taken meanwhile", async () => {
    const dir = await suiteDir("thaw-start-workerd-");
    await writeFile(join(dir, "worker.js"), WORKER);
    await writeFile(join(dir, "config.capnp"), CONFIG);
    // Held for the whole test, as in the collision this retries: the first port handed out is the
    // source port of a connection (to a server of its own), which workerd cannot bind.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = connect((server.address() as { port: number }).port, "127.0.0.1");
    await new Promise((resolve) => client.once("connect", resolve));
    cleanups.push(() => {
      client.destroy();
      return new Promise((resolve) => server.close(resolve));
    });
    const takenPort = client.localPort!;
    const handed: number[] = [];
    const started = await startWorkerd(
      1,
      ([port]) => ["serve", join(dir, "config.capnp"), "--socket-addr", `main=127.0.0.1:${port}`],
      ([port], child, output) => until(`http://127.0.0.1:${port}/`, child, output),
      async () => {
        const port = handed.length === 0 ? takenPort : await freePort();
        handed.push(port);
        return port;
      },
    );
    cleanups.push(() => Promise.resolve(started.child.kill()));
    assert.equal(handed.length, 2);
    assert.notEqual(started.ports[0], takenPort);
    const answer = await fetch(`http://127.0.0.1:${started.ports[0]}/`);
    assert.equal(await answer.text(), "up");
  });
});
