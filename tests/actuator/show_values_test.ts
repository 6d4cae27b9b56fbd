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

describe("valueShower: a configured secret written as a key", () => {
  // Spring masks values only; a secret the configuration holds is masked wherever it is written,
  // a mapping's key included (`tokens: { <the token>: true }`), whatever its type.
  const config = resolveConfig({
    app: { password: "s3cr3t-value", pin: { password: 123456 }, big: { token: 98765n } },
    tokens: { "s3cr3t-value": true, "123456": true, "98765": "x", "1": "short" },
    hosts: ["a", "b"],
  }, () => undefined);

  for (const show of ["never", "always"] as const) {
    it(`never shows one, as text or a number, under ${show}`, () => {
      const shower = valueShower(config, show);
      const shown = [
        shower.key("tokens.123456"),
        shower.key("tokens.s3cr3t-value"),
        shower.key("tokens.98765"),
        JSON.stringify(shower.tree("", config.values)),
      ].join(" ");
      for (const secret of ["s3cr3t-value", "123456", "98765"]) {
        assert.ok(!shown.includes(secret), `${secret} in ${shown}`);
      }
      // Only whole keys: an index, a short key and the rest of the key stay readable.
      assert.equal(shower.key("hosts[1]"), "hosts[1]");
      assert.equal(shower.key("tokens.1"), "tokens.1");
      assert.equal(shower.key("tokens.123456"), "tokens.***");
      assert.equal(shower.key("app.x123456"), "app.x123456");
    });
  }
});
