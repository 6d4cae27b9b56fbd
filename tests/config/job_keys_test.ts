// The keys of @thaw/thaw/jobs: checked once its entry is imported, each wrong one refused naming it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap } from "../../mod.ts";
import { data } from "../../data.ts";
import { JOB_KEYS } from "../../src/config/job_keys.ts";
import { jobs } from "../../jobs.ts";

const datasource = [{ name: "main", url: "sqlite::memory:" }];

describe("jobs.* keys", () => {
  it("keeps jobs in a datasource's table by default", () => {
    assert.equal(JOB_KEYS["jobs.store"].default, "datasource");
  });

  it("refuses a wrong value, naming the key", async () => {
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ store: "redis" }, /jobs\.store/],
      [{ retention: "a week" }, /jobs\.retention: give milliseconds \(250\) or a duration/],
      [{ "poll-interval": 0 }, /jobs\.poll-interval: .*above 0, got 0/],
      [{ "poll-intervall": "1s" }, /jobs\.poll-intervall/],
    ];
    for (const [keys, message] of refusals) {
      await assert.rejects(
        bootstrap({ config: { datasource, jobs: keys }, data: data(), jobs: jobs() }),
        message,
        JSON.stringify(keys),
      );
    }
  });

  it("refuses a jobs.datasource no datasource has, naming it", async () => {
    await assert.rejects(
      bootstrap({
        config: { datasource, jobs: { datasource: "orders" } },
        data: data(),
        jobs: jobs(),
      }),
      /jobs\.datasource: no datasource is named "orders" \(the datasources: main\)/,
    );
  });
});
