// The WebSocket upgrade is each server's own: two apps in one process, each served by its own
// `listen`, each open the sockets of their own `@WebSocketMapping`; and an app no `listen` serves
// is not upgraded by another app's server. Over real sockets, on whichever runtime runs the suite.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, RestController, type WebSocketHandlers, WebSocketMapping } from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { openAccepted } from "./ws_raw_client.ts";

@RestController()
class First {
  @WebSocketMapping("/who")
  who(): WebSocketHandlers {
    return { onMessage: (event, ws) => ws.send(`first: ${String(event.data)}`) };
  }
}

@RestController()
class Second {
  @WebSocketMapping("/who")
  who(): WebSocketHandlers {
    return { onMessage: (event, ws) => ws.send(`second: ${String(event.data)}`) };
  }
}

const served = { port: 0, hostname: "127.0.0.1", signals: false, quiet: true } as const;

describe(`the WebSocket upgrade of each server, on ${RUNTIME}`, () => {
  const servers: Server[] = [];

  before(async () => {
    const first = await bootstrap({ controllers: [First] });
    const second = await bootstrap({ controllers: [Second] });
    // Both listen before either upgrades: the second `listen` must not take over the first's.
    servers.push(await listen(first, served), await listen(second, served));
  });
  after(() => Promise.all(servers.map((server) => server.close())));

  it("opens a socket to each app on its own server, each answered by its own mapping", async () => {
    for (const [server, name] of [[servers[0], "first"], [servers[1], "second"]] as const) {
      const ws = await openAccepted(server.port, "/who");
      try {
        await ws.sendText("hello");
        assert.deepEqual(await ws.next(), { type: "text", data: `${name}: hello` });
      } finally {
        await ws.close(1000);
        await ws.closed;
      }
    }
  });

  it("opens sockets to both apps at once, each answered by its own", async () => {
    const sockets = await Promise.all(servers.map((server) => openAccepted(server.port, "/who")));
    try {
      await Promise.all(sockets.map((ws, i) => ws.sendText(`at once ${i}`)));
      const messages = await Promise.all(sockets.map((ws) => ws.next()));
      assert.deepEqual(messages, [
        { type: "text", data: "first: at once 0" },
        { type: "text", data: "second: at once 1" },
      ]);
    } finally {
      await Promise.all(sockets.map(async (ws) => {
        await ws.close(1000);
        await ws.closed;
      }));
    }
  });

  // Deno upgrades through `Deno.upgradeWebSocket` whoever serves the app: no server's to take.
  if (RUNTIME !== "deno") {
    it("does not upgrade an app served by a server of its own through Thaw's server", async () => {
      const logger = memoryLogger();
      const unserved = await bootstrap({ controllers: [First], logger });
      try {
        // What a server that is not `listen`'s passes: bindings of its own, no socket handler.
        const answer = await unserved.fetch(
          new Request("http://127.0.0.1/who", {
            headers: {
              Upgrade: "websocket",
              Connection: "Upgrade",
              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
              "Sec-WebSocket-Version": "13",
            },
          }),
          {},
        );
        await answer.body?.cancel();
        // No server took the upgrade: a failure of the app, never a 101 that opened nothing.
        assert.equal(answer.status, 500);
        assert.match(String(logger.lines[0]?.[1]), /the runtime did not upgrade the request/);
      } finally {
        await unserved.close();
      }
    });
  }
});
