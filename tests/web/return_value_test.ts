import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type Application,
  bootstrap,
  GetMapping,
  ResponseEntity,
  RestController,
} from "../../mod.ts";
import { call, memoryLogger } from "../helpers.ts";

@RestController()
class Returns {
  @GetMapping("/object")
  object() {
    return { a: 1 };
  }
  @GetMapping("/array")
  array() {
    return [1, { b: 2 }];
  }
  @GetMapping("/string")
  string(): string {
    return "héllo";
  }
  @GetMapping("/nothing")
  nothing(): void {}
  @GetMapping("/null")
  null(): null {
    return null;
  }
  @GetMapping("/number")
  number(): number {
    return 7;
  }
  @GetMapping("/entity")
  entity(): ResponseEntity {
    return ResponseEntity.status(418).withHeader("X-A", "1").withJson({ tea: true });
  }
  @GetMapping("/response")
  response(): Response {
    return new Response("raw", { status: 203, headers: { "x-raw": "yes" } });
  }
  @GetMapping("/bytes")
  bytes(): Uint8Array {
    return new Uint8Array([1, 2, 3]);
  }
  @GetMapping("/async")
  async async(): Promise<{ later: boolean }> {
    await new Promise((r) => setTimeout(r, 1));
    return { later: true };
  }
  @GetMapping("/bigint")
  bigint(): unknown {
    return { n: 1n };
  }
  @GetMapping("/function")
  fn(): unknown {
    return () => 1;
  }
}

const logger = memoryLogger();
let cached: Application | undefined;
const appOf = async () => cached ??= await bootstrap({ controllers: [Returns], logger });

describe("return values", () => {
  it("an object or array is JSON", async () => {
    const app = await appOf();
    for (
      const [path, body] of [["/object", { a: 1 }], ["/array", [1, { b: 2 }]], ["/null", null], [
        "/number",
        7,
      ]] as const
    ) {
      const res = await call(app, "GET", path);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.deepEqual(await res.json(), body);
    }
  });

  it("a string is text/plain; charset=utf-8", async () => {
    const app = await appOf();
    const res = await call(app, "GET", "/string");
    assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(await res.text(), "héllo");
  });

  it("undefined is 204", async () => {
    const app = await appOf();
    const res = await call(app, "GET", "/nothing");
    assert.equal(res.status, 204);
    assert.equal(res.body, null);
  });

  it("a ResponseEntity gives full control; a Response passes through", async () => {
    const app = await appOf();
    const entity = await call(app, "GET", "/entity");
    assert.equal(entity.status, 418);
    assert.equal(entity.headers.get("x-a"), "1");
    assert.deepEqual(await entity.json(), { tea: true });
    const raw = await call(app, "GET", "/response");
    assert.equal(raw.status, 203);
    assert.equal(raw.headers.get("x-raw"), "yes");
    assert.equal(await raw.text(), "raw");
  });

  it("bytes are sent as they are; async handlers are awaited", async () => {
    const app = await appOf();
    assert.deepEqual(
      new Uint8Array(await (await call(app, "GET", "/bytes")).arrayBuffer()),
      new Uint8Array([1, 2, 3]),
    );
    assert.deepEqual(await (await call(app, "GET", "/async")).json(), { later: true });
  });

  it("a value that cannot be sent is a 500 that says nothing internal", async () => {
    const app = await appOf();
    for (const path of ["/bigint", "/function"]) {
      const res = await call(app, "GET", path);
      assert.equal(res.status, 500);
      assert.equal((await res.json()).error, null);
    }
    assert.equal(logger.lines.length, 2);
    assert.match(String(logger.lines[0][0]), /Returns\.bigint \(GET \/bigint\) failed/);
  });
});
