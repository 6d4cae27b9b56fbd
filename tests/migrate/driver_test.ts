import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppliedThenFailed, recordedBy, TargetIo } from "../../src/migrate/driver.ts";
import { ConnectionFailure } from "../../src/migrate/migration_error.ts";

describe("recordedBy", () => {
  it("names the runner as user@host, the same in every driver's records", () => {
    assert.equal(recordedBy({ host: "build-7", pid: 12, user: "ci" }), "ci@build-7");
  });

  it("says unknown where the user cannot be told, rather than leaving the name out", () => {
    assert.equal(recordedBy({ host: "build-7", pid: 12 }), "unknown@build-7");
    assert.equal(recordedBy({ host: "build-7", pid: 12, user: "" }), "unknown@build-7");
  });
});

describe("TargetIo", () => {
  const io = () =>
    new TargetIo("main", () => 0, { count() {} }, (e): e is TypeError => e instanceof TypeError);

  it("makes the driver's own error a ConnectionFailure, also after a file was recorded", async () => {
    const own = new TypeError("connection reset");
    await assert.rejects(io().run(() => Promise.reject(own)), (error) => {
      assert.ok(error instanceof ConnectionFailure);
      assert.equal(error.cause, own);
      return true;
    });
    const applied = { result: "sent", ms: 3 } as const;
    await assert.rejects(
      io().run(() => Promise.reject(new AppliedThenFailed(applied, 0, own))),
      (error) => {
        assert.ok(error instanceof AppliedThenFailed);
        assert.deepEqual(error.applied, applied);
        assert.ok(error.failure instanceof ConnectionFailure);
        assert.equal(error.failure.detail.connection, "main");
        assert.equal(error.failure.cause, own);
        return true;
      },
    );
    // Anything else passes as it is.
    const other = new RangeError("x");
    await assert.rejects(
      io().run(() => Promise.reject(new AppliedThenFailed(applied, 0, other))),
      (error) => error instanceof AppliedThenFailed && error.failure === other,
    );
  });
});
