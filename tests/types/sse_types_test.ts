// `@SseMapping`'s types: checked by `tsc` (tests/types/tsconfig.json) and by `deno check`. Each
// wrong use carries `@ts-expect-error`, so the check fails if the compiler stops refusing it; the
// test at the end runs the correct controller.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, PathVariable, RequestHeader, RestController, SseMapping } from "../../mod.ts";

@RestController()
class Streams {
  @SseMapping(
    "/n/{n}",
    PathVariable("n", Number),
    RequestHeader("Last-Event-ID", { required: false }),
  )
  async *numbers(n: number, lastId: string | undefined) {
    yield { id: lastId ?? "0", data: n };
  }

  @SseMapping("/feed")
  feed(): AsyncIterable<string> {
    return (async function* () {
      yield "a";
    })();
  }
}

// Compile-time fixtures only: never bootstrapped.
export class Wrong {
  // @ts-expect-error a stream's method returns an AsyncIterable, not a value
  @SseMapping("/value")
  value(): string {
    return "x";
  }

  // @ts-expect-error the path variable is a number, not text
  @SseMapping("/n/{n}", PathVariable("n", Number))
  async *text(n: string) {
    yield n;
  }

  // @ts-expect-error the path has no {id}
  @SseMapping("/none", PathVariable("id"))
  async *noVariable(id: string) {
    yield id;
  }
}

describe("@SseMapping types", () => {
  it("the correct controller streams", async () => {
    const app = await bootstrap({ controllers: [Streams] });
    const res = await app.fetch(new Request("http://localhost/n/4"));
    assert.equal(await res.text(), "id: 0\ndata: 4\n\n");
    assert.equal(
      await (await app.fetch(new Request("http://localhost/feed"))).text(),
      "data: a\n\n",
    );
  });
});
