// Durations and cron expressions, against small reference models.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { cronTrigger as readCron, loadCron, sameCron } from "../../src/scheduling/trigger.ts";
import { propertyOptions } from "../property.ts";

const Cron = await loadCron();
const cronTrigger = (expression: string, zone?: string) => readCron(Cron, expression, zone);

// A cron of lists only (seconds, minutes, hours; every day), and the answer found by looking at
// every second, in UTC: the reference the trigger must agree with.
const field = (max: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: 4 });

function referenceNext(
  seconds: number[],
  minutes: number[],
  hours: number[],
  after: number,
): number {
  let t = Math.floor(after / 1000) * 1000 + 1000;
  for (;;) {
    const d = new Date(t);
    if (
      seconds.includes(d.getUTCSeconds()) && minutes.includes(d.getUTCMinutes()) &&
      hours.includes(d.getUTCHours())
    ) return t;
    t += 1000;
  }
}

describe("cronTrigger", () => {
  it("fires first at the reference model's next second, strictly after the time given", () => {
    fc.assert(
      fc.property(
        field(59),
        field(59),
        field(23),
        fc.integer({
          min: Date.parse("2020-01-01T00:00:00Z"),
          max: Date.parse("2040-01-01T00:00:00Z"),
        }),
        (seconds, minutes, hours, after) => {
          const trigger = cronTrigger(`${seconds} ${minutes} ${hours} * * *`, "UTC");
          const next = trigger.next(after)!;
          assert.equal(next, referenceNext(seconds, minutes, hours, after));
          assert.ok(next > after);
          // From the tick itself, the next one is later still: a tick never fires twice.
          assert.ok(trigger.next(next)! > next);
        },
      ),
      propertyOptions(60),
    );
  });

  it("reads five fields as seconds 0, names, macros and `?`", () => {
    const at = Date.parse("2026-03-04T10:00:30Z"); // a Wednesday
    const next = (cron: string) => new Date(cronTrigger(cron, "UTC").next(at)!).toISOString();
    assert.equal(next("15 10 * * *"), "2026-03-04T10:15:00.000Z");
    assert.equal(next("0 0 12 ? * FRI"), "2026-03-06T12:00:00.000Z");
    assert.equal(next("@daily"), "2026-03-05T00:00:00.000Z");
    assert.equal(next("0 0 0 L * ?"), "2026-03-31T00:00:00.000Z");
    assert.equal(cronTrigger("  0 0  * * *  ").expression, "0 0 * * *");
  });

  it("as Spring, needs both the day of month and the day of week when both are given", () => {
    // Friday the 13th: March 2026 has one; Unix cron (either day) would fire on Friday the 6th.
    const next = cronTrigger("0 0 0 13 * FRI", "UTC").next(Date.parse("2026-03-01T00:00:00Z"));
    assert.equal(new Date(next!).toISOString(), "2026-03-13T00:00:00.000Z");
  });

  it("refuses, with croner's reason, what it cannot read", () => {
    for (
      const bad of ["", "* * * *", "* * * * * * * *", "61 * * * * *", "0 0 * * * MOON", "@reboot"]
    ) {
      assert.throws(() => cronTrigger(bad), TypeError, bad);
    }
    assert.throws(() => cronTrigger("* * * * *", "Not/AZone"), /zone "Not\/AZone"/);
  });

  it("never throws anything but a TypeError, whatever the text", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          cronTrigger(text);
        } catch (error) {
          assert.ok(error instanceof TypeError, String(error));
        }
      }),
      propertyOptions(300),
    );
  });
});

describe("sameCron", () => {
  const fiveFields = fc.array(
    fc.constantFrom("*", "0", "5", "0/5", "1-5", "MON", "mon", "JAN", "1,2"),
    { minLength: 5, maxLength: 5 },
  );

  it("matches a job to its trigger: the same fields, or seconds 0 before them", () => {
    fc.assert(
      fc.property(fiveFields, fc.constantFrom(" ", "  ", "\t"), (fields, space) => {
        const trigger = fields.join(" ");
        assert.ok(sameCron(fields.join(space), trigger));
        assert.ok(sameCron(`0 ${trigger}`, trigger.toUpperCase()));
        assert.ok(!sameCron(`30 ${trigger}`, trigger));
        assert.ok(!sameCron(trigger, `0 ${trigger}`));
      }),
      propertyOptions(),
    );
  });

  it("tells different fields apart", () => {
    fc.assert(
      fc.property(fiveFields, fiveFields, (a, b) => {
        const same = a.every((f, i) => f.toLowerCase() === b[i].toLowerCase());
        assert.equal(sameCron(a.join(" "), b.join(" ")), same);
      }),
      propertyOptions(),
    );
  });
});
