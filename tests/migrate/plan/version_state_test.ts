import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readVersionRecords } from "../../../src/migrate/plan/version_state.ts";

describe("readVersionRecords", () => {
  it("tells pending, applied and undone files apart", () => {
    const records = readVersionRecords([
      "V1__init.sql",
      "V2__users.sql",
      "U2__users.sql",
      "V3__slugs.ts",
      "U3__slugs.ts",
    ]);
    assert.equal(records.stateOf("V1__init.sql", "1"), "applied");
    assert.equal(records.stateOf("V2__users.sql", "2"), "undone");
    assert.equal(records.stateOf("V3__slugs.ts", "3"), "undone");
    assert.equal(records.stateOf("V4__x.sql", "4"), "pending");
  });

  it("reads an undo record of one version in any spelling, in any folder", () => {
    const records = readVersionRecords(["a/V1.0__x.sql", "b/U001__x.sql", "V2__y.sql"]);
    assert.equal(records.stateOf("a/V1.0__x.sql", "1.0"), "undone");
    assert.equal(records.stateOf("V2__y.sql", "2"), "applied");
    assert.deepEqual(records.undoRecordsOf("1"), ["b/U001__x.sql"]);
    assert.deepEqual(records.undoRecordsOf("2"), []);
  });

  it("keeps an undo record without its V record, and it undoes nothing", () => {
    const records = readVersionRecords(["U4__x.sql"]);
    assert.equal(records.stateOf("V4__x.sql", "4"), "pending");
    assert.deepEqual([...records.undos], [["U4__x.sql", "4"]]);
    assert.deepEqual(records.versioned, []);
  });

  it("lists every undo record of a version, for migrate to drop them all", () => {
    const records = readVersionRecords(["V2__x.sql", "z/U2__b.sql", "U2.0__a.sql", "U3__c.sql"]);
    assert.deepEqual(records.undoRecordsOf("2"), ["U2.0__a.sql", "z/U2__b.sql"]);
  });

  it("says what applying a file of a version replaces: its undo and undone records", () => {
    const records = readVersionRecords(["V3__c.sql", "U3__c.sql", "V2__b.sql", "V4__d.sql"]);
    // A fixed V3 under a new name: the undone V3 record and its undo record go.
    assert.deepEqual(records.replacedBy("V3__fixed.sql", "3"), ["V3__c.sql", "U3__c.sql"]);
    // The undone file itself, applied again: its own record stays.
    assert.deepEqual(records.replacedBy("V3__c.sql", "3.0"), ["U3__c.sql"]);
    // No undo record of the version: nothing is replaced.
    assert.deepEqual(records.replacedBy("V2__other.sql", "2"), []);
  });

  it("reads versioned records only, without throwing on names today's rules refuse", () => {
    const records = readVersionRecords([
      "V1__a.sql",
      "R__views.sql",
      "001_init.sql",
      "V1..2__old.sql",
      "U__old.sql",
      "2024/V5__b.sql",
    ]);
    assert.deepEqual(records.versioned, [
      { path: "V1__a.sql", version: "1" },
      { path: "2024/V5__b.sql", version: "5" },
    ]);
    assert.equal(records.undos.size, 0);
  });
});
