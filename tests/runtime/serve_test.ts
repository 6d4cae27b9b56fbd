import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { serve as nodeServe } from "@hono/node-server";
import {
  bootstrap,
  Component,
  GetMapping,
  HttpRequest,
  PathVariable,
  PostMapping,
  RequestBody,
  type ResponseEntity,
  RestController,
} from "../../mod.ts";
import { listen } from "../../server.ts";
import { memoryLogger } from "../helpers.ts";

@RestController()
class Sizes {
  @GetMapping("/json/{word}", PathVariable("word"))
  json(word: string) {
    return { word };
  }
  @GetMapping("/text/{word}", PathVariable("word"))
  text(word: string): string {
    return word;
  }
  @GetMapping("/fail/{word}", PathVariable("word"))
  fail(word: string): never {
    throw new Error(word);
  }
}

@Component("errorController")
class BrokenErrorController {
  handleError(_r: HttpRequest, response: ResponseEntity, _s: number, error: unknown): void {
    const message = (error as Error).message;
    if (message.startsWith("broken")) throw new Error("the handler broke too");
    response.setBody({ status: 500, message });
  }
}

// Each answer must carry its own length: a server adapter that keeps the headers object it is
// given (as @hono/node-server does) must not get one object shared by several responses.
describe("listen(app) on this runtime, over a real socket", () => {
  it("gives each response the Content-Length of its own body, response after response", async () => {
    const app = await bootstrap({
      controllers: [Sizes, BrokenErrorController],
      logger: memoryLogger(),
    });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1" });
    try {
      const paths = [
        "/json/a",
        "/json/a-much-longer-word",
        "/text/a",
        "/text/a-much-longer-word",
        "/fail/a",
        "/fail/a-much-longer-word",
        "/fail/broken",
        "/fail/broken-again-and-longer",
        "/json/b",
      ];
      for (const path of paths) {
        const response = await fetch(`${server.url}${path}`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        const length = response.headers.get("content-length");
        if (length !== null) assert.equal(Number(length), bytes.byteLength, path);
        const text = new TextDecoder().decode(bytes);
        if (path.startsWith("/json/")) assert.deepEqual(JSON.parse(text), { word: path.slice(6) });
        else if (path.startsWith("/text/")) assert.equal(text, path.slice(6));
        else assert.equal(JSON.parse(text).status, 500, path);
      }
    } finally {
      await server.close();
    }
  });
});

@RestController()
class Bodies {
  @PostMapping("/json", RequestBody())
  json(body: unknown) {
    return { body };
  }
  @PostMapping("/text", HttpRequest)
  async text(request: HttpRequest) {
    return { text: await request.text() };
  }
}

/** Sends `head` and then each of `parts` as written, and returns the whole answer. */
function exchange(
  port: number,
  head: string,
  parts: (string | Uint8Array)[] = [],
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => answer += chunk.toString());
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.write(head);
    for (const part of parts) socket.write(part);
  });
}

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
}

function bodyOf(answer: string): unknown {
  const text = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  // A chunked answer: the size line, the chunk, the terminator.
  return JSON.parse(/^[0-9a-f]+\r\n/.test(text) ? text.split("\r\n")[1] : text);
}

type WithServer = (run: (port: number) => Promise<void>) => Promise<void>;

const bodyApp = () => bootstrap({ controllers: [Bodies], maxBodySize: 64, logger: memoryLogger() });

// listen(app): Deno.serve, Bun.serve, or on Node node:http with bodies read before the handler.
const throughListen: WithServer = async (run) => {
  const server = await listen(await bodyApp(), { port: 0, hostname: "127.0.0.1" });
  try {
    await run(server.port);
  } finally {
    await server.close();
  }
};

// What the README shows Node users who serve app.fetch themselves: the request reaches Thaw as
// the adapter's stand-in for a web Request, its body still on the socket.
const throughNodeServer: WithServer = async (run) => {
  const fetch = (await bodyApp()).fetch;
  const server = await new Promise<ReturnType<typeof nodeServe>>((resolve) => {
    // Without replacing the global Request and Response, which Bun and Deno would keep for every
    // later test file of the run; the stand-in Request is the same either way.
    const s = nodeServe(
      { fetch, port: 0, hostname: "127.0.0.1", overrideGlobalObjects: false },
      () => resolve(s),
    );
  });
  try {
    await run((server.address() as { port: number }).port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
};

for (
  const [how, withServer] of [
    ["listen(app)", throughListen],
    ["@hono/node-server's serve(app.fetch)", throughNodeServer],
  ] as const
) {
  describe(`request bodies through ${how} on this runtime`, () => {
    const head = (path: string, headers: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}\r\n`;

    it("reads a JSON body of declared length, in one or several packets", async () => {
      await withServer(async (port) => {
        const body = '{"name":"Zoë","n":[1,2]}';
        const length = new TextEncoder().encode(body).byteLength;
        const json = `Content-Type: application/json\r\nContent-Length: ${length}\r\n`;
        const whole = await exchange(port, head("/json", json), [body]);
        assert.equal(statusOf(whole), 200, whole);
        assert.deepEqual(bodyOf(whole), { body: { name: "Zoë", n: [1, 2] } });
        const split = await exchange(port, head("/json", json), [body.slice(0, 5), body.slice(5)]);
        assert.deepEqual(bodyOf(split), { body: { name: "Zoë", n: [1, 2] } });
      });
    });

    it("reads a chunked body, and a body for HttpRequest.text()", async () => {
      await withServer(async (port) => {
        const chunked = await exchange(
          port,
          head("/json", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"),
          ['4\r\n{"a"\r\n', "3\r\n:1}\r\n", "0\r\n\r\n"],
        );
        assert.equal(statusOf(chunked), 200, chunked);
        assert.deepEqual(bodyOf(chunked), { body: { a: 1 } });
        const text = await exchange(port, head("/text", "Content-Length: 5\r\n"), ["héll"]);
        assert.deepEqual(bodyOf(text), { text: "héll" });
      });
    });

    it("answers 413 over the limit, declared or chunked, and 400 for bytes that are not UTF-8", async () => {
      await withServer(async (port) => {
        const big = "x".repeat(65);
        const declared = await exchange(
          port,
          head("/json", "Content-Type: application/json\r\nContent-Length: 65\r\n"),
          [big],
        );
        assert.equal(statusOf(declared), 413, declared);
        const chunked = await exchange(
          port,
          head("/text", "Transfer-Encoding: chunked\r\n"),
          [`41\r\n${big}\r\n`, "0\r\n\r\n"],
        );
        assert.equal(statusOf(chunked), 413, chunked);
        const latin1 = await exchange(
          port,
          head("/json", "Content-Type: application/json\r\nContent-Length: 7\r\n"),
          [new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d])],
        );
        assert.equal(statusOf(latin1), 400, latin1);
      });
    });

    it("takes a JSON media type in any spelling, and answers 415 for another or none", async () => {
      await withServer(async (port) => {
        const send = (type: string) =>
          exchange(port, head("/json", `${type}Content-Length: 7\r\n`), ['{"a":1}']);
        const types = ["application/json", "Application/JSON; charset=utf-8", "application/x+json"];
        for (const type of types) {
          const answer = await send(`Content-Type: ${type}\r\n`);
          assert.equal(statusOf(answer), 200, answer);
          assert.deepEqual(bodyOf(answer), { body: { a: 1 } });
        }
        const text = await send("Content-Type: text/plain\r\n");
        assert.equal(statusOf(text), 415, text);
        assert.match(text, /got \\"text\/plain\\"/);
        const none = await send("");
        assert.equal(statusOf(none), 415, none);
        assert.match(none, /got none/);
      });
    });

    it("goes on serving after a client leaves in the middle of its body", async () => {
      await withServer(async (port) => {
        await new Promise<void>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(head("/json", "Content-Type: application/json\r\nContent-Length: 40\r\n"));
            socket.write('{"half":');
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 50);
          });
          socket.on("error", reject);
        });
        const after = await exchange(
          port,
          head("/json", "Content-Type: application/json\r\nContent-Length: 7\r\n"),
          ['{"a":1}'],
        );
        assert.deepEqual(bodyOf(after), { body: { a: 1 } });
      });
    });
  });
}
