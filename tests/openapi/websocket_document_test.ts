// A `@WebSocketMapping` route in the OpenAPI document: a GET answered 101, its upgrade, not the
// JSON a `@GetMapping`'s value is.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, PathVariable, RestController, WebSocketMapping } from "../../mod.ts";
import { openApiDocument } from "../../openapi.ts";
import { assertValidOpenApi } from "./openapi_validator.ts";

@RestController()
class Rooms {
  @WebSocketMapping("/rooms/{room:[a-z]+}", PathVariable("room"))
  join(_room: string) {
    return {};
  }
}

describe("the OpenAPI document of a @WebSocketMapping route", () => {
  it("documents a GET answered 101, with its path variable and no body", async () => {
    const doc = await openApiDocument(await bootstrap({ controllers: [Rooms] }));
    await assertValidOpenApi(doc);
    const operation = doc.paths["/rooms/{room}"].get as Record<string, unknown>;
    assert.deepEqual((operation.parameters as { name: string }[]).map((p) => p.name), ["room"]);
    const responses = operation.responses as Record<string, unknown>;
    assert.deepEqual(responses["101"], {
      description: "Switching Protocols: the connection is now a WebSocket",
    });
    assert.equal(responses["200"], undefined);
  });
});
