import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordedBy } from "../../src/migrate/driver.ts";

describe("recordedBy", () => {
  it("names the runner as user@host, the same in every driver's records", () => {
    assert.equal(recordedBy({ host: "build-7", pid: 12, user: "ci" }), "ci@build-7");
  });

  it("says unknown where the user cannot be told, rather than leaving the name out", () => {
    assert.equal(recordedBy({ host: "build-7", pid: 12 }), "unknown@build-7");
    assert.equal(recordedBy({ host: "build-7", pid: 12, user: "" }), "unknown@build-7");
  });
});
