import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { atCallSite } from "../../../src/migrate/code/call_site.ts";
import { lineIn } from "../../../src/migrate/code/stack_line.ts";
import { silentProgress } from "../../../src/migrate/run_report.ts";
import { noMask } from "../../../src/config/secrets_mask.ts";
import { migrationContext } from "../../../src/migrate/code/migration_context.ts";
import { sqlContext } from "../../../src/migrate/sql/sql_code_context.ts";
import type { SqlSession } from "../../../src/migrate/sql/sql_database.ts";
import { RUNTIME } from "../../runtime.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

/** A rejection from a timer's callback, as a driver's socket gives one: no frame of the caller. */
function rejectLater(message: string, code?: string): Promise<never> {
  return new Promise((_, reject) => {
    setTimeout(() => {
      const error = new Error(message);
      if (code !== undefined) Object.assign(error, { code });
      reject(error);
    }, 1);
  });
}

type Migration = (ctx: unknown) => Promise<unknown>;

// The line of each `await ctx.query(...)` in MIGRATION, 1-based.
const MIGRATION = [
  "// a migration that awaits a call that fails later",
  "export default async function (ctx) {",
  "  await null;",
  "  const rows = await ctx.query('SELECT 1');",
  "  if (ctx.second) {",
  "    await ctx.query('SELECT * FROM missing');",
  "  }",
  "  return rows;",
  "}",
  "",
].join("\n");
const FIRST_CALL = 4;
const SECOND_CALL = 6;

describe(`atCallSite on ${RUNTIME}`, () => {
  let folder = "";
  let file = "";
  let run: Migration;
  const suiteDir = suiteTempDirs();

  before(async () => {
    folder = await realpath(await suiteDir("thaw-call-site-"));
    file = join(folder, "V3__calls.js");
    await writeFile(file, MIGRATION);
    run = (await import(`${pathToFileURL(file).href}?thaw=ab12cd34ef567890`) as {
      default: Migration;
    }).default;
  });

  /** What `run(ctx)` rejects with. */
  async function failure(ctx: unknown): Promise<unknown> {
    return await run(ctx).then(
      () => assert.fail("the migration did not fail"),
      (error: unknown) => error,
    );
  }

  it("without it, a rejection from a timer names no line of the file", async () => {
    const error = await failure({ query: () => rejectLater("from the socket") });
    assert.equal(lineIn(error, file), undefined, String((error as Error).stack));
  });

  it("with it, the same rejection has the caller's frames: the line of the await", async () => {
    const original = await failure({
      query: () => atCallSite(() => rejectLater("relation missing does not exist", "42P01")),
    }) as Error & { code?: string };
    assert.ok(original instanceof Error);
    assert.equal(lineIn(original, file), FIRST_CALL, original.stack);
    // The error is the driver's own, its name, message and code kept; only its stack is new.
    assert.equal(original.message, "relation missing does not exist");
    assert.equal(original.code, "42P01");
    assert.ok(
      original.stack!.startsWith("Error: relation missing does not exist\n"),
      original.stack,
    );
  });

  it("the line of the call that failed, not of an earlier one", async () => {
    let calls = 0;
    const error = await failure({
      second: true,
      query: () =>
        atCallSite(() => ++calls === 1 ? Promise.resolve([{ one: 1 }]) : rejectLater("no table")),
    });
    assert.equal(calls, 2);
    assert.equal(lineIn(error, file), SECOND_CALL, String((error as Error).stack));
  });

  it("a call that throws at once gets the call's line too, its class named", async () => {
    const error = await failure({
      query: () =>
        atCallSite(() => {
          throw new TypeError("bad parameters");
        }),
    }) as Error;
    assert.ok(error instanceof TypeError);
    assert.equal(lineIn(error, file), FIRST_CALL, error.stack);
    assert.ok(error.stack!.startsWith("TypeError: bad parameters\n"), error.stack);
  });

  it("passes a value through, and a rejection that is no Error unchanged", async () => {
    assert.deepEqual(
      await run({ query: () => atCallSite(() => Promise.resolve([{ one: 1 }])) }),
      [{ one: 1 }],
    );
    const value = { reason: "not an Error" };
    assert.equal(
      await failure({ query: () => atCallSite(() => Promise.reject(value)) }),
      value,
    );
    assert.equal(await failure({ query: () => atCallSite(() => Promise.reject("text")) }), "text");
  });

  it("ctx.query of a SQL file: its session's late rejection at the line of the await", async () => {
    const base = migrationContext({
      connection: "main",
      path: "V3__calls.js",
      placeholders: undefined,
      progress: silentProgress,
      mask: noMask,
      signal: undefined,
    });
    const seen: unknown[][] = [];
    const session: SqlSession = {
      query: (text, params) => {
        seen.push([text, params]);
        return rejectLater(`no such table in ${text}`, "42P01");
      },
    };
    const ctx = sqlContext(base, "postgres", session);
    assert.equal(ctx.kind, "postgres");
    assert.equal(ctx.connection, "main");
    const error = await failure(ctx) as Error & { code?: string };
    assert.deepEqual(seen, [["SELECT 1", undefined]]);
    assert.equal(lineIn(error, file), FIRST_CALL, error.stack);
    assert.equal(error.code, "42P01");
  });

  it("ctx.query's own checks reject (never throw) at the line of the call", async () => {
    const base = migrationContext({
      connection: "main",
      path: "V3__calls.js",
      placeholders: undefined,
      progress: silentProgress,
      mask: noMask,
      signal: undefined,
    });
    const session: SqlSession = { query: () => assert.fail("sent") };
    const ctx = sqlContext(base, "sqlite", session);
    const query = ctx.query as (text: unknown, params?: unknown) => Promise<unknown>;
    const notText = query(42);
    assert.ok(notText instanceof Promise);
    await assert.rejects(notText, /^TypeError: ctx\.query takes the statement's text first$/);
    await assert.rejects(
      query("SELECT ?", 1),
      /^TypeError: ctx\.query takes its parameters as an array$/,
    );
    const viaFile = { ...ctx, query: (text: string) => query(text, "x") };
    const error = await failure(viaFile) as Error;
    assert.ok(error instanceof TypeError);
    assert.equal(lineIn(error, file), FIRST_CALL, error.stack);
  });
});
