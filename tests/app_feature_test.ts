// The features a class's decorators bring: recorded in its metadata, inherited by its subclasses,
// found once each among the beans.
// Decorated classes need Symbol.metadata, which mod.ts brings first on runtimes without it.
import "../src/context/symbol_metadata.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bringFeature, broughtFeatures, type FeatureFactory } from "../src/app_feature.ts";

const scheduling: FeatureFactory = () => ({});
const events: FeatureFactory = () => ({ observers: [] });

/** A class decorator that brings `feature`, as `@Scheduled` and `@EventListener` do. */
function brings(feature: FeatureFactory) {
  return (_: unknown, context: ClassDecoratorContext) => bringFeature(context.metadata, feature);
}

describe("broughtFeatures", () => {
  it("finds each feature once, in the order the beans first bring it", () => {
    @brings(events)
    @brings(scheduling)
    @brings(events)
    class Both {}
    @brings(scheduling)
    class Jobs {}
    class Plain {}
    const beans = [new Plain(), new Jobs(), new Both()].map((instance) => ({ instance }));
    assert.deepEqual(broughtFeatures(beans), [scheduling, events]);
    assert.deepEqual(broughtFeatures([{ instance: new Plain() }]), []);
    // What is no object brings nothing.
    assert.deepEqual(broughtFeatures([{ instance: null }, { instance: 7 }]), []);
  });

  it("gives a subclass its superclass's features, and never the other way round", () => {
    @brings(scheduling)
    class Base {}
    @brings(events)
    class Derived extends Base {}
    assert.deepEqual(broughtFeatures([{ instance: new Derived() }]), [scheduling, events]);
    assert.deepEqual(broughtFeatures([{ instance: new Base() }]), [scheduling]);
  });
});
