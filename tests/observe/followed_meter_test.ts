// The instruments of the registered meter provider: none while it is the no-op one, made once per
// provider, made again on the next provider registered, and the left provider's undone.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { FollowedMeter } from "../../src/observe/followed_meter.ts";
import { restoreMeterProviderAfter } from "../metric_reader.ts";

restoreMeterProviderAfter();

describe("FollowedMeter", () => {
  it("makes nothing on the no-op provider, once per provider, and leaves the one it left", () => {
    api.metrics.disable();
    const made: string[] = [];
    const left: string[] = [];
    let n = 0;
    const followed = new FollowedMeter(
      api,
      (meter) => {
        const name = `made ${++n}`;
        made.push(name);
        return { name, counter: meter.createCounter("c") };
      },
      ({ name }) => left.push(name),
    );
    assert.equal(followed.current(), undefined);
    assert.equal(followed.current(), undefined);
    assert.deepEqual(made, []);

    api.metrics.setGlobalMeterProvider(new MeterProvider());
    const first = followed.current();
    assert.equal(first?.name, "made 1");
    assert.equal(followed.current(), first);

    api.metrics.disable();
    api.metrics.setGlobalMeterProvider(new MeterProvider());
    assert.equal(followed.current()?.name, "made 2");
    assert.deepEqual(left, ["made 1"]);

    api.metrics.disable();
    assert.equal(followed.current(), undefined);
    assert.deepEqual(left, ["made 1", "made 2"]);
    assert.deepEqual(made, ["made 1", "made 2"]);
  });
});
