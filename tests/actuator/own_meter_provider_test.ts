import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { scriptCommand } from "../runtime.ts";

describe("request telemetry beside the app's own MeterProvider", () => {
  it("keeps the app's provider: the request metrics go there and to /actuator/prometheus", async () => {
    const fixture = fileURLToPath(new URL("../fixtures/own_meter_provider.ts", import.meta.url));
    const [command, args] = scriptCommand(fixture);
    const { stdout } = await promisify(execFile)(command, args, { encoding: "utf8" });
    const seen = JSON.parse(stdout);
    assert.deepEqual(seen.provider, [
      { scope: "thaw", name: "http.server.request.duration", routes: ["/own/{id}"] },
      { scope: "shop", name: "own.orders", routes: [null] },
    ]);
    assert.equal(seen.scrapeHasRoute, true);
    // The app's own meters are its provider's: Thaw's endpoint shows its request metrics alone.
    assert.equal(seen.scrapeHasOrders, false);
  });
});
