import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { POOL_DEFAULTS, resolvePoolSettings } from "../../src/data/pool_settings.ts";

describe("pool_settings", () => {
  it("puts the settings given over the defaults", () => {
    assert.deepEqual(resolvePoolSettings("main", {}), POOL_DEFAULTS);
    assert.deepEqual(resolvePoolSettings("main", { maxSize: 3, acquireTimeoutMs: 50 }), {
      ...POOL_DEFAULTS,
      maxSize: 3,
      acquireTimeoutMs: 50,
    });
  });

  it("refuses a setting that is not a positive number, naming the datasource and the key", () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5" as unknown as number]) {
      assert.throws(
        () => resolvePoolSettings("reports", { idleTimeoutMs: bad }),
        /datasource "reports": pool setting idleTimeoutMs must be a positive number/,
      );
    }
    assert.throws(
      () => resolvePoolSettings("reports", { maxSize: 0.5 }),
      /datasource "reports": pool setting maxSize must be at least 1/,
    );
  });
});
