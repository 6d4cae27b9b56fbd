import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  bootstrap,
  Component,
  GetMapping,
  type HttpRequest,
  PathVariable,
  type ResponseEntity,
  RestController,
} from "../../mod.ts";
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
describe("app.listen on this runtime, over a real socket", () => {
  it("gives each response the Content-Length of its own body, response after response", async () => {
    const app = await bootstrap({
      controllers: [Sizes, BrokenErrorController],
      logger: memoryLogger(),
    });
    const server = await app.listen({ port: 0, hostname: "127.0.0.1" });
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
