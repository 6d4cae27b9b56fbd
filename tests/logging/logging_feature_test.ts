import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { featureSetup } from "../../src/feature_value.ts";
import { loggingFeature } from "../../src/logging/logging_feature.ts";
import { loggingSetup } from "../../src/logging/logging_setup.ts";

describe("loggingFeature", () => {
  it("is an opaque, frozen value standing for its setup", () => {
    const value = loggingFeature(loggingSetup);
    assert.deepEqual(value, { feature: "logging" });
    assert.ok(Object.isFrozen(value));
    assert.equal(featureSetup(value, { option: "logging", factory: "logging" }), loggingSetup);
    assert.throws(
      () => featureSetup(() => value, { option: "logging", factory: "logging" }),
      /call it, logging\(\)/,
    );
  });
});
