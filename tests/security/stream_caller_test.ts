// The caller of a request that opened a stream or a socket, in the calls that come after the
// handler returned: each pull of an `@SseMapping` iterator, each event of a `@WebSocketMapping`
// socket. The runtimes make those calls from their own servers, some inside the request's async
// context and some outside it; the caller must be the same on every one, and never another's.
// Over real HTTP through listen(app), two callers at once.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  RestController,
  SseMapping,
  type WebSocketHandlers,
  WebSocketMapping,
} from "../../mod.ts";
import { listen, type Server } from "../../server.ts";
import { security, SecurityContext } from "../../security.ts";
import { memoryLogger } from "../helpers.ts";
import { RUNTIME } from "../runtime.ts";
import { exchange, request } from "../runtime/raw_client.ts";
import { openAccepted, openSocket } from "../runtime/ws_raw_client.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";

const who = () => SecurityContext.current()?.name ?? "nobody";
// The sockets the handler opened: a refused upgrade opens none.
let opened = 0;

@RestController()
class Live {
  @SseMapping("/feed")
  async *feed() {
    for (let i = 0; i < 3; i++) {
      yield { data: who() };
      // A timer's turn: the next pull continues the generator from the server's side.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  @WebSocketMapping("/chat")
  chat(): WebSocketHandlers {
    opened++;
    return {
      onMessage: async (event, ws) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        ws.send(`${String(event.data)} from ${who()}`);
      },
    };
  }
}

describe(`the caller of a stream and a socket, after the handler returned, on ${RUNTIME}`, () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  let server: Server;
  const bearer = async (sub: string) =>
    `Authorization: Bearer ${await token(key, { iss: issuer.url, sub }, Date.now())}`;

  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    const app = await bootstrap({
      controllers: [Live],
      config: { security: { oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } } } },
      security: security(),
      logger: memoryLogger(),
    });
    server = await listen(app, { port: 0, hostname: "127.0.0.1" });
  });
  after(async () => {
    await server.close();
    await issuer.down();
  });

  it("sees the caller in every event of a stream", async () => {
    const [ann, bob] = await Promise.all(
      ["ann", "bob"].map(async (sub) =>
        await exchange(server.port, request("GET", "/feed", [await bearer(sub)]))
      ),
    );
    assert.equal(ann.status, 200);
    assert.deepEqual(ann.body.match(/data: \w+/g), ["data: ann", "data: ann", "data: ann"]);
    assert.deepEqual(bob.body.match(/data: \w+/g), ["data: bob", "data: bob", "data: bob"]);
  });

  it("sees the caller in every event of a socket", async () => {
    const [ann, bob] = await Promise.all(
      ["ann", "bob"].map(async (sub) => {
        const [name, value] = (await bearer(sub)).split(": ");
        return await openAccepted(server.port, "/chat", { [name]: value });
      }),
    );
    try {
      for (const [ws, name] of [[ann, "ann"], [bob, "bob"], [ann, "ann"]] as const) {
        await ws.sendText("hi");
        assert.deepEqual(await ws.next(), { type: "text", data: `hi from ${name}` });
      }
    } finally {
      for (const ws of [ann, bob]) {
        await ws.close(1000);
        await ws.closed;
      }
    }
  });
  it("refuses an upgrade without a caller, or with a refused token: 401, and no socket", async () => {
    const before = opened;
    const forged = await token({ ...key, kid: "unknown" }, { iss: issuer.url }, Date.now());
    for (
      const headers of [{}, { Authorization: `Bearer ${forged}` }, { Authorization: "Bearer" }]
    ) {
      const answer = await openSocket(server.port, "/chat", headers);
      assert.ok(answer.refused, JSON.stringify(headers));
      assert.equal(answer.status, 401, JSON.stringify(headers));
      assert.match(answer.head, /\r\nwww-authenticate: Bearer/i);
    }
    assert.equal(opened, before, "the handler never ran");
  });
});
