import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { policyApiOf } from "../../../../src/migrate/search/plan/policy_api.ts";
import { propertyOptions } from "../../../property.ts";

const ISM_POLICY = { default_state: "hot", states: [{ name: "hot", actions: [] }] };
const ILM_POLICY = { phases: { delete: { min_age: "30d", actions: { delete: {} } } } };

describe("policyApiOf", () => {
  it("is ILM for phases without states, ISM for anything else", () => {
    assert.equal(policyApiOf(ILM_POLICY).name, "ILM");
    assert.equal(policyApiOf(ISM_POLICY).name, "ISM");
    assert.equal(policyApiOf({ ...ISM_POLICY, ...ILM_POLICY }).name, "ISM");
    for (const other of [{}, undefined, null, [], "phases", { description: "d" }]) {
      assert.equal(policyApiOf(other).name, "ISM");
    }
  });

  it("updates ISM's policy only under the sequence numbers read, ILM's as it is", () => {
    assert.equal(policyApiOf(ISM_POLICY).conditional, true);
    assert.equal(policyApiOf(ILM_POLICY).conditional, false);
    assert.match(policyApiOf(ISM_POLICY).updateNotice("p"), /^policy "p" updated: .*change_policy/);
    assert.match(policyApiOf(ILM_POLICY).updateNotice("p"), /^policy "p" updated: .*phase/);
  });

  it("reads the policy out of each API's answer", () => {
    const ism = { _id: "p", _seq_no: 3, _primary_term: 1, policy: ISM_POLICY };
    assert.deepEqual(policyApiOf(ISM_POLICY).live(ism, "p"), ism);
    const ilm = { p: { version: 4, modified_date: "2026-11-25", policy: ILM_POLICY } };
    assert.deepEqual(policyApiOf(ILM_POLICY).live(ilm, "p"), ilm.p);
    assert.equal(policyApiOf(ILM_POLICY).live(ilm, "q"), undefined);
    // An id that is also an Object.prototype key is not found on the prototype.
    assert.equal(policyApiOf(ILM_POLICY).live({}, "constructor"), undefined);
  });

  it("property: a path is one segment holding the id, whatever its characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1 }), (id) => {
        for (
          const [api, prefix] of [
            [policyApiOf(ISM_POLICY), "/_plugins/_ism/policies/"],
            [policyApiOf(ILM_POLICY), "/_ilm/policy/"],
          ] as const
        ) {
          const path = api.path(id);
          assert.ok(path.startsWith(prefix), path);
          const segment = path.slice(prefix.length);
          assert.ok(!/[/?#]/.test(segment), path);
          assert.equal(decodeURIComponent(segment), id);
        }
      }),
      propertyOptions(500),
    );
  });
});
