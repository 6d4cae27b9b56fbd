import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MethodPlans } from "../../src/context/method_plans.ts";

describe("MethodPlans", () => {
  it("makes a method's plan once per class, whatever the bean it is called on", () => {
    class Billing {}
    class Audit extends Billing {}
    const plans = new MethodPlans<string>();
    const made: string[] = [];
    const make = (method: string) => (type: object) => {
      made.push(`${(type as { name: string }).name}.${method}`);
      return `${(type as { name: string }).name}.${method}`;
    };
    assert.equal(plans.of(new Billing(), "charge", make("charge")), "Billing.charge");
    assert.equal(plans.of(new Billing(), "charge", make("charge")), "Billing.charge");
    assert.equal(plans.of(new Billing(), "refund", make("refund")), "Billing.refund");
    // A subclass may decorate its own methods otherwise: a plan of its own.
    assert.equal(plans.of(new Audit(), "charge", make("charge")), "Audit.charge");
    assert.deepEqual(made, ["Billing.charge", "Billing.refund", "Audit.charge"]);
  });

  it("keeps no plan when making it throws: the next call tries again", () => {
    class Billing {}
    const plans = new MethodPlans<number>();
    let calls = 0;
    const make = () => {
      if (++calls === 1) throw new Error("no datasource yet");
      return calls;
    };
    assert.throws(() => plans.of(new Billing(), "charge", make), /no datasource yet/);
    assert.equal(plans.of(new Billing(), "charge", make), 2);
    assert.equal(plans.of(new Billing(), "charge", make), 2);
  });
});
