import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { noMask, placeholdersMask } from "../../../src/config/secrets_mask.ts";
import {
  type ContextSource,
  migrationContext,
} from "../../../src/migrate/code/migration_context.ts";
import { type Progress, silentProgress } from "../../../src/migrate/run_report.ts";

/** Progress that keeps the steps it is given. */
function recording(): { progress: Progress; steps: [string, string][] } {
  const steps: [string, string][] = [];
  return { progress: { ...silentProgress, step: (c, m) => steps.push([c, m]) }, steps };
}

function source(more: Partial<ContextSource> = {}): ContextSource {
  return {
    connection: "main",
    path: "sub/V3__backfill.ts",
    placeholders: undefined,
    progress: silentProgress,
    mask: noMask,
    signal: undefined,
    ...more,
  };
}

describe("migrationContext", () => {
  it("names the connection and the file's path", () => {
    const ctx = migrationContext(source());
    assert.equal(ctx.connection, "main");
    assert.equal(ctx.path, "sub/V3__backfill.ts");
  });

  it("gives the placeholders as a frozen copy", () => {
    const placeholders = new Map([["schema", "app"], ["token", "s3cr3t-value"]]);
    const ctx = migrationContext(source({ placeholders }));
    assert.deepEqual({ ...ctx.placeholders }, { schema: "app", token: "s3cr3t-value" });
    assert.ok(Object.isFrozen(ctx.placeholders));
    // Test modules are strict: writing to a frozen object throws.
    assert.throws(() => {
      (ctx.placeholders as Record<string, string>).schema = "other";
    }, TypeError);
    assert.throws(() => {
      (ctx.placeholders as Record<string, string>).added = "x";
    }, TypeError);
    assert.throws(() => {
      delete (ctx.placeholders as Record<string, string>).token;
    }, TypeError);
    assert.equal(ctx.placeholders.schema, "app");
    // A copy: the connection's own map is neither changed nor followed.
    placeholders.set("schema", "changed");
    placeholders.set("later", "x");
    assert.equal(ctx.placeholders.schema, "app");
    assert.equal(ctx.placeholders.later, undefined);
    assert.equal(placeholders.get("token"), "s3cr3t-value");
    // Each context its own copy.
    const other = migrationContext(source({ placeholders }));
    assert.notEqual(other.placeholders, ctx.placeholders);
    assert.equal(other.placeholders.schema, "changed");
  });

  it("no placeholders: an empty frozen object", () => {
    const ctx = migrationContext(source());
    assert.deepEqual({ ...ctx.placeholders }, {});
    assert.ok(Object.isFrozen(ctx.placeholders));
  });

  it("log: a step of the run's progress under the connection, placeholder values masked", () => {
    const { progress, steps } = recording();
    const placeholders = new Map([["token", "s3cr3t-value"], ["user", "admin-user"]]);
    const ctx = migrationContext(
      source({ placeholders, progress, mask: placeholdersMask(placeholders) }),
    );
    ctx.log(`token=${ctx.placeholders.token} for ${ctx.placeholders.user}`);
    ctx.log("copied 40%");
    assert.deepEqual(steps, [
      ["main", "token=${token} for ${user}"],
      ["main", "copied 40%"],
    ]);
  });

  it("log: a value that is no string is written as one, and masked too", () => {
    const { progress, steps } = recording();
    const ctx = migrationContext(
      source({ progress, mask: (text) => text.replaceAll("s3cr3t", "${token}") }),
    );
    const log = ctx.log as (message: unknown) => void;
    log(42);
    log({ toString: () => "object s3cr3t" });
    log(undefined);
    assert.deepEqual(steps.map(([, m]) => m), ["42", "object ${token}", "undefined"]);
  });

  it("signal: the run's own, when it has one", () => {
    const controller = new AbortController();
    const ctx = migrationContext(source({ signal: controller.signal }));
    assert.equal(ctx.signal, controller.signal);
    assert.equal(ctx.signal.aborted, false);
    controller.abort(new Error("Ctrl-C"));
    assert.equal(ctx.signal.aborted, true);
  });

  it("signal: present without a run signal, and never aborted", () => {
    const ctx = migrationContext(source());
    assert.ok(ctx.signal instanceof AbortSignal);
    assert.equal(ctx.signal.aborted, false);
    assert.doesNotThrow(() => ctx.signal.throwIfAborted());
    let aborted = false;
    ctx.signal.addEventListener("abort", () => (aborted = true));
    assert.equal(aborted, false);
  });
});
