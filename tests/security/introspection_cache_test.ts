// The cache of introspected callers against a small reference model: any sequence of sets, gets
// and clock moves gives what the model gives, an entry is never read at or past its time, and the
// cache never holds more than its bound.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { IntrospectionCache } from "../../src/security/introspection_cache.ts";
import type { Authentication } from "../../src/security/security_context.ts";
import { propertyOptions } from "../property.ts";

const callerOf = (name: string): Authentication => ({ name, authorities: [], claims: {} });

type Step =
  | { readonly kind: "set"; readonly key: string; readonly exp: number | undefined }
  | { readonly kind: "get"; readonly key: string }
  | { readonly kind: "tick"; readonly ms: number };

describe("IntrospectionCache", () => {
  it("answers as a reference model, within its bound", () => {
    const key = fc.constantFrom("a", "b", "c", "d", "e");
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant("set" as const),
        key,
        exp: fc.option(fc.integer({ min: -50, max: 200 }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant("get" as const), key }),
      fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 80 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(step, { maxLength: 60 }),
        (ttl, max, steps) => {
          const cache = new IntrospectionCache(ttl, max);
          // The model: key -> [name, until], in insertion order.
          const model = new Map<string, [string, number]>();
          let now = 1_000;
          for (const [i, s] of steps.entries()) {
            if (s.kind === "tick") now += s.ms;
            else if (s.kind === "set") {
              const exp = s.exp === undefined ? undefined : now + s.exp;
              cache.set(s.key, callerOf(`${s.key}${i}`), now, exp);
              const until = Math.min(now + ttl, exp ?? Infinity);
              if (until > now) {
                model.delete(s.key);
                if (model.size >= max) model.delete(model.keys().next().value as string);
                model.set(s.key, [`${s.key}${i}`, until]);
              }
            } else {
              const kept = model.get(s.key);
              const live = kept !== undefined && kept[1] > now ? kept[0] : undefined;
              if (kept !== undefined && live === undefined) model.delete(s.key);
              assert.equal(cache.get(s.key, now)?.name, live);
            }
            assert.ok(cache.size <= max, `${cache.size} kept, bound ${max}`);
          }
        },
      ),
      propertyOptions(),
    );
  });

  it("keeps nothing with a time to live of 0, nor past an exp already reached", () => {
    const none = new IntrospectionCache(0);
    none.set("a", callerOf("ann"), 1_000, undefined);
    assert.equal(none.get("a", 1_000), undefined);
    assert.equal(none.size, 0);
    const cache = new IntrospectionCache(60_000);
    cache.set("a", callerOf("ann"), 1_000, 1_000);
    assert.equal(cache.size, 0);
    cache.set("b", callerOf("bob"), 1_000, 1_500);
    assert.equal(cache.get("b", 1_499)?.name, "bob");
    assert.equal(cache.get("b", 1_500), undefined);
  });
});
