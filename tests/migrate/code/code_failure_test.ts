import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { noMask, placeholdersMask } from "../../../src/config/secrets_mask.ts";
import { codeFailure } from "../../../src/migrate/code/code_failure.ts";
import type { Mask } from "../../../src/config/secrets_mask.ts";
import type { CodeFile } from "../../../src/migrate/code/code_file.ts";
import { CodeLoadError, loadCode } from "../../../src/migrate/code/load_code.ts";
import { planCodeFile } from "../../../src/migrate/code/plan_code_file.ts";
import { MigrationFailure } from "../../../src/migrate/migration_error.ts";
import { tempDir } from "../../temp_dir.ts";

const SOURCE = "/abs/migrations/main/V3__backfill.ts";
const URL_OF_SOURCE = `${pathToFileURL(SOURCE).href}?thaw=ab12cd34ef567890`;

/** `V3__backfill.ts`, read from `SOURCE` unless `source` is `null`. */
function codeFile(source: string | null = SOURCE): CodeFile {
  return {
    path: "V3__backfill.ts",
    hash: "ab12cd34ef567890".repeat(4),
    runOnce: true,
    code: { kind: "file", url: URL_OF_SOURCE },
    ...(source === null ? {} : { source }),
  };
}

/** The failure of `file` on connection `main`, as a target reports it. */
function fail(file: CodeFile, error: unknown, mask: Mask, after?: string): MigrationFailure {
  return codeFailure(file, error, {
    connection: "main",
    mask,
    ...(after === undefined ? {} : { after }),
  });
}

/** An error thrown at `line` of the file, below a frame of a helper module. */
function thrownAt(line: number, message = "boom", name = "Error"): Error {
  const error = new Error(message);
  error.name = name;
  error.stack = [
    `${name}: ${message}`,
    "    at helper (file:///abs/lib/helper.ts:40:11)",
    `    at default (${URL_OF_SOURCE}:${line}:9)`,
    "    at async runCode (file:///abs/src/sql_target.ts:9:5)",
  ].join("\n");
  return error;
}

describe("codeFailure", () => {
  it("a MigrationFailure of the connection and file, its error as the cause", () => {
    const error = thrownAt(12, "no third item");
    const failure = fail(codeFile(), error, noMask);
    assert.ok(failure instanceof MigrationFailure);
    assert.equal(failure.kind, "failure");
    assert.equal(failure.cause, error);
    assert.deepEqual(failure.detail, {
      connection: "main",
      file: "V3__backfill.ts",
      line: 12,
      reason: "no third item",
    });
    assert.equal(failure.message, 'connection "main", file V3__backfill.ts:12: no third item');
  });

  it("the line of the first frame in the file, whatever frames come before it", () => {
    const error = new Error("x");
    error.stack = [
      "Error: x",
      "    at Socket.emit (node:events:1:1)",
      `    at async default (${SOURCE}:7:3)`,
      `    at async default (${SOURCE}:30:3)`,
    ].join("\n");
    assert.equal(fail(codeFile(), error, noMask).detail.line, 7);
  });

  it("no line when the stack names no place in the file, or the file was read from no folder", () => {
    const elsewhere = new Error("x");
    elsewhere.stack = "Error: x\n    at helper (file:///abs/lib/helper.ts:40:11)";
    const failure = fail(codeFile(), elsewhere, noMask);
    assert.equal(failure.detail.line, undefined);
    assert.ok(!("line" in failure.detail));
    assert.equal(failure.message, 'connection "main", file V3__backfill.ts: x');
    // A module given to migrate(): no source to find in a stack.
    assert.equal(fail(codeFile(null), thrownAt(12), noMask).detail.line, undefined);
  });

  it("the line from a failed import's cause (a SyntaxError's location)", () => {
    const syntax = new SyntaxError("Unexpected token ')'");
    syntax.stack = `${SOURCE}:3\nexport default ) (;\n\nSyntaxError: Unexpected token ')'`;
    const error = new CodeLoadError(`could not be imported: SyntaxError: ${syntax.message}`, {
      cause: syntax,
    });
    error.stack =
      "CodeLoadError: could not be imported\n    at loadCode (file:///abs/load_code.ts:1:1)";
    const failure = fail(codeFile(), error, noMask);
    assert.equal(failure.detail.line, 3);
    // A CodeLoadError's message says it all; its name is not added.
    assert.equal(failure.detail.reason, "could not be imported: SyntaxError: Unexpected token ')'");
    // The error's own stack first: it names the line where the two differ.
    const own = new CodeLoadError("its default export is missing", { cause: syntax });
    own.stack = `CodeLoadError: x\n    at default (${SOURCE}:9:1)`;
    assert.equal(fail(codeFile(), own, noMask).detail.line, 9);
  });

  it("masks the reason, and what `after` adds, with the connection's placeholders", () => {
    const mask = placeholdersMask(new Map([["token", "s3cr3t-value"], ["tenant", "acme-corp"]]));
    const error = thrownAt(4, "login s3cr3t-value refused for acme-corp");
    const failure = fail(codeFile(), error, mask, "; left s3cr3t-value behind");
    assert.equal(
      failure.detail.reason,
      "login ${token} refused for ${tenant}; left ${token} behind",
    );
    assert.doesNotMatch(failure.message, /s3cr3t-value|acme-corp/);
    // A value thrown as it is, too.
    assert.equal(
      fail(codeFile(), "s3cr3t-value", mask).detail.reason,
      "threw ${token}",
    );
  });

  it("`after` is added to the reason as it is", () => {
    const failure = fail(codeFile(), thrownAt(2, "x"), noMask, "; more");
    assert.equal(failure.detail.reason, "x; more");
  });

  it("names the error's class unless it is a plain Error", () => {
    const cases: [Error, string][] = [
      [new Error("plain"), "plain"],
      [
        new TypeError("ctx.query takes its parameters as an array"),
        "TypeError: ctx.query takes its parameters as an array",
      ],
      [new RangeError("too far"), "RangeError: too far"],
      [Object.assign(new Error("mine"), { name: "BackfillError" }), "BackfillError: mine"],
      [new CodeLoadError("its default export is a number"), "its default export is a number"],
    ];
    for (const [error, reason] of cases) {
      assert.equal(fail(codeFile(), error, noMask).detail.reason, reason);
    }
  });

  it("copies the database's code only when it is a non-empty string", () => {
    const withCode = (code: unknown) =>
      fail(codeFile(), Object.assign(thrownAt(5, "no table"), { code }), noMask)
        .detail;
    assert.equal(withCode("42P01").code, "42P01");
    assert.equal(withCode("ER_NO_SUCH_TABLE").code, "ER_NO_SUCH_TABLE");
    for (const code of ["", 1146, 0, null, undefined, { sqlState: "42P01" }, ["42P01"], true]) {
      const detail = withCode(code);
      assert.ok(!("code" in detail), `${JSON.stringify(code)}: ${JSON.stringify(detail)}`);
    }
    // The reason is the message alone: the code has its own field.
    assert.equal(withCode("42P01").reason, "no table");
  });

  it("a thrown value that is no Error: `threw <value>`, no line, its code if it has one", () => {
    const cases: [unknown, string][] = [
      ["boom", "threw boom"],
      [42, "threw 42"],
      [undefined, "threw undefined"],
      [null, "threw null"],
      [false, "threw false"],
      [Symbol("s"), "threw Symbol(s)"],
      [10n, "threw 10"],
      [{ toString: () => "custom" }, "threw custom"],
      // No string of their own: the failure is still a failure, never a crash of the runner.
      [Object.create(null), "threw [object Object]"],
      [{
        toString: () => {
          throw new Error("no");
        },
      }, "threw [object Object]"],
      [{ [Symbol.toPrimitive]: () => ({}) }, "threw [object Object]"],
      [
        Object.defineProperty({}, "stack", {
          get() {
            throw new Error("no stack");
          },
        }),
        "threw [object Object]",
      ],
    ];
    for (const [value, reason] of cases) {
      const failure = fail(codeFile(), value, noMask);
      assert.equal(failure.detail.reason, reason);
      assert.equal(failure.detail.line, undefined);
      assert.equal(failure.detail.code, undefined);
      assert.equal(failure.cause, value);
    }
    // An object that looks like an error: read for its stack and its code, shown as a value.
    const like = {
      message: "from a driver",
      code: "23505",
      stack: `Error: from a driver\n    at default (${SOURCE}:6:1)`,
    };
    const failure = fail(codeFile(), like, noMask);
    assert.equal(failure.detail.line, 6);
    assert.equal(failure.detail.code, "23505");
    assert.equal(failure.detail.reason, "threw [object Object]");
  });

  it("a callback file: the event named beside it", () => {
    const failure = codeFailure(codeFile(), thrownAt(12, "x"), {
      connection: "main",
      mask: noMask,
      callback: "afterMigrate",
    });
    assert.equal(failure.detail.callback, "afterMigrate");
    assert.equal(
      failure.message,
      'connection "main", callback V3__backfill.ts:12 (afterMigrate): x',
    );
    assert.ok(!("callback" in fail(codeFile(), thrownAt(12), noMask).detail));
  });
});

describe("codeFailure: what a report's message leaves out", () => {
  it("drops terminal colours and the import's ?thaw= query from the reason", () => {
    const error = new CodeLoadError(
      `could not be imported: TypeError: Module not found "file:///abs/lib/gone.js".\n    at ` +
        `\u001b[0m\u001b[36m${URL_OF_SOURCE}\u001b[0m:\u001b[0m\u001b[33m1\u001b[0m:\u001b[0m` +
        `\u001b[33m8\u001b[0m`,
    );
    const failure = fail(codeFile(), error, noMask);
    assert.equal(
      failure.detail.reason,
      `could not be imported: TypeError: Module not found "file:///abs/lib/gone.js".\n    at ` +
        `${pathToFileURL(SOURCE).href}:1:8`,
    );
    // The line is still read from the error as it was thrown.
    assert.equal(failure.detail.line, 1);
    assert.ok(!failure.message.includes("\u001b"), failure.message);
    assert.doesNotMatch(failure.message, /\?thaw=/);
  });

  it("on a real import that fails on this runtime", async () => {
    await using dir = await tempDir("thaw-code-failure-");
    const path = join(dir.path, "V1__bad.js");
    const bytes = new TextEncoder().encode('import "./gone.js";\nexport default () => {};\n');
    await writeFile(path, bytes);
    const file = await planCodeFile({ path: "V1__bad.js", bytes, hash: "", source: path });
    const error = await loadCode(file).then(() => undefined, (thrown: unknown) => thrown);
    assert.ok(error instanceof CodeLoadError, String(error));
    const failure = fail(file, error, noMask);
    assert.match(failure.detail.reason, /could not be imported/);
    assert.ok(!failure.message.includes("\u001b"), failure.message);
    assert.doesNotMatch(failure.message, /\?thaw=/);
  });
});
