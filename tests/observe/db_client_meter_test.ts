// The database clients' shared meter: nothing made while the no-op provider is registered, one
// making per provider (the same instruments on each call), the former provider's callbacks undone
// when another is registered, and made again after forget().
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import * as api from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { DbClientMeter } from "../../src/observe/db_client_meter.ts";
import { CollectingReader, restoreMeterProviderAfter } from "../metric_reader.ts";

restoreMeterProviderAfter();

describe("DbClientMeter", () => {
  after(() => api.metrics.disable());

  it("follows the registered provider, undoing what it made of the former one", async () => {
    api.metrics.disable();
    const made: string[] = [];
    const undone: string[] = [];
    let round = 0;
    const meter = new DbClientMeter(api, (_meter, duration) => {
      const name = `made ${++round}`;
      made.push(name);
      return { value: { name, duration }, undo: () => undone.push(name) };
    });
    // The no-op provider: nothing made, nothing to record to.
    assert.equal(meter.current(), undefined);
    assert.deepEqual(made, []);

    const first = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [first] }));
    const one = meter.current();
    assert.equal(one?.name, "made 1");
    assert.equal(meter.current(), one);
    one?.duration.record(0.002, { "db.system.name": "test" });
    const [point] = await first.points("db.client.operation.duration");
    assert.equal((point.value as { count: number }).count, 1);

    // Another provider replaces it: the first one's callbacks go.
    api.metrics.disable();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new CollectingReader()] }));
    assert.equal(meter.current()?.name, "made 2");
    assert.deepEqual(undone, ["made 1"]);

    meter.forget();
    assert.deepEqual(undone, ["made 1", "made 2"]);
    assert.equal(meter.current()?.name, "made 3");
    assert.deepEqual(made, ["made 1", "made 2", "made 3"]);
  });
});
