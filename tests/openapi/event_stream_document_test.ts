// An `@SseMapping` route in the OpenAPI document: a GET whose answer is a `text/event-stream`, not
// the JSON a `@GetMapping`'s value is.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiResponse, bootstrap, GetMapping, RestController, SseMapping } from "../../mod.ts";
import { openApiDocument } from "../../openapi.ts";
import { assertValidOpenApi } from "./openapi_validator.ts";

@RestController()
class Ticks {
  @SseMapping("/ticks")
  async *ticks() {
    yield 1;
  }

  @ApiResponse(200, { description: "One tick a second" })
  @SseMapping("/slow-ticks")
  async *slowTicks() {
    yield 1;
  }

  @GetMapping("/tick")
  tick(): number {
    return 1;
  }
}

describe("the OpenAPI document of an @SseMapping route", () => {
  it("documents a GET answered 200 with a text/event-stream of strings", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [Ticks] }));
    await assertValidOpenApi(doc);
    assert.deepEqual(Object.keys(doc.paths["/ticks"]), ["get"]);
    const responses = doc.paths["/ticks"].get.responses as Record<string, unknown>;
    assert.deepEqual(responses["200"], {
      description: "A stream of server-sent events",
      content: { "text/event-stream": { schema: { type: "string" } } },
    });
    // A description of the app's own is kept, the stream still a stream.
    assert.deepEqual((doc.paths["/slow-ticks"].get.responses as Record<string, unknown>)["200"], {
      description: "One tick a second",
      content: { "text/event-stream": { schema: { type: "string" } } },
    });
    // A plain GET is documented as it always was.
    assert.deepEqual((doc.paths["/tick"].get.responses as Record<string, unknown>)["200"], {
      description: "OK",
    });
  });
});
