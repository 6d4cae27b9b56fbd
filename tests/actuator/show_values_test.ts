import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MASKED, valueShower } from "../../src/actuator/show_values.ts";
import { resolveConfig } from "../../src/config/application_config.ts";

const shower = valueShower(resolveConfig({}, () => undefined), "always");

describe("valueShower().tree", () => {
  it("masks an object that holds itself, where it comes again, rather than walking 2^32 paths", () => {
    const loop: Record<string, unknown> = { name: "a" };
    loop.left = loop;
    loop.right = loop;
    assert.deepEqual(shower.tree("bean", loop), { name: "a", left: MASKED, right: MASKED });
  });

  it("bounds the values one answer walks when one object is shared at every level", () => {
    // No cycle: 2^40 paths, each a distinct path to the same few objects.
    let level: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) level = { a: level, b: level };
    const shown = JSON.stringify(shower.tree("bean", level));
    // The walk stopped: the answer is bounded, and what it did not reach is masked.
    assert.ok(shown.length < 50_000_000, `${shown.length} characters`);
    assert.match(shown, new RegExp(MASKED.replace(/[*]/g, "\\*")));
    // Each answer walks afresh: a second one is as whole as the first.
    assert.equal(JSON.stringify(shower.tree("bean", level)), shown);
  });
});
