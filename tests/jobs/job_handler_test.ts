// `@JobHandler` where it is written and where the app is made: public instance methods only, one
// handler per queue, and an app with a handler but without `jobs()` stopped, told what to import;
// `jobs.*` keys without `jobs()` likewise.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { JobHandler } from "../../jobs.ts";
import { foundHandlers } from "../../src/jobs/job_handler.ts";

describe("@JobHandler", () => {
  it("refuses a queue that is no queue's name, and a static or private method", () => {
    assert.throws(() => JobHandler("mail box"), /@JobHandler\(queue\): a queue's name is 1 to 75/);
    assert.throws(() => JobHandler(5 as never), /got 5/);
    assert.throws(
      () => {
        class Mailer {
          @JobHandler("mail")
          static send(): void {}
        }
        return Mailer;
      },
      /@JobHandler\("mail"\) on send: it runs public instance methods only/,
    );
  });

  it("finds one handler per queue, and refuses a second one naming both", () => {
    class Mailer {
      @JobHandler("mail")
      send(): void {}
      @JobHandler("bounce")
      bounce(): void {}
    }
    class Other {
      @JobHandler("mail")
      mail(): void {}
    }
    const found = foundHandlers([{ instance: new Mailer() }]);
    assert.deepEqual(found.map((h) => [h.queue, h.where]), [
      ["mail", "Mailer.send()"],
      ["bounce", "Mailer.bounce()"],
    ]);
    assert.throws(
      () => foundHandlers([{ instance: new Mailer() }, { instance: new Other() }]),
      /Other\.mail\(\): @JobHandler\("mail"\): Mailer\.send\(\) handles that queue already/,
    );
  });

  it("stops an app that has a handler but no jobs(), saying what to import", async () => {
    @Service()
    class Mailer {
      @JobHandler("mail")
      send(): void {}
    }
    await assert.rejects(
      bootstrap({ components: [Mailer] }),
      /Mailer\.send\(\): @JobHandler\("mail"\) runs on the job queue, which lives in its own entry point: import \{ jobs \} from "@thaw\/thaw\/jobs"/,
    );
  });

  it("stops an app whose configuration sets jobs keys without jobs()", async () => {
    await assert.rejects(
      bootstrap({ config: { jobs: { retention: "1d" } } }),
      /jobs: these keys configure the job queue, which lives in its own entry point: import \{ jobs \} from "@thaw\/thaw\/jobs" and pass bootstrap\(\{ jobs: jobs\(\) \}\)/,
    );
  });
});
