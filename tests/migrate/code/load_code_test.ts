import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CodeFile } from "../../../src/migrate/code/code_file.ts";
import type { CodeMigration } from "../../../src/migrate/code/code_context.ts";
import { CodeLoadError, loadCode, loadDown } from "../../../src/migrate/code/load_code.ts";
import { planCodeFile } from "../../../src/migrate/code/plan_code_file.ts";
import { currentRuntime } from "../../../src/migrate/code/typescript_support.ts";
import { rawContentHash } from "../../../src/migrate/files/content_hash.ts";
import { lineIn } from "../../../src/migrate/code/stack_line.ts";
import { RUNTIME } from "../../runtime.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

/** Calls a loaded migration function with `ctx`. */
function call(run: CodeMigration<never>, ctx: unknown = {}): unknown {
  return (run as unknown as (ctx: unknown) => unknown)(ctx);
}

describe(`loadCode on ${RUNTIME}, real files`, () => {
  let folder = "";
  const suiteDir = suiteTempDirs();

  before(async () => {
    // Real path: a file is located in stacks by the path it was imported from.
    folder = await realpath(await suiteDir("thaw-load-code-"));
  });

  /** Writes `text` as `name` and plans it as a folder walk would, on this runtime. */
  async function planned(name: string, text: string): Promise<CodeFile> {
    const source = join(folder, name);
    await writeFile(source, text);
    const bytes = new Uint8Array(await readFile(source));
    return await planCodeFile(
      { path: name, bytes, hash: await rawContentHash(bytes), source },
      undefined,
      currentRuntime(),
    );
  }

  /** What `loadCode` rejects with, which must be a CodeLoadError. */
  async function loadError(file: CodeFile): Promise<CodeLoadError> {
    const error = await loadCode(file).then(
      () => assert.fail(`${file.path} loaded`),
      (error: unknown) => error,
    );
    assert.ok(error instanceof CodeLoadError, String(error));
    assert.equal(error.name, "CodeLoadError");
    return error;
  }

  it("returns the default export of a .js file, and of a .ts file", async () => {
    const js = await loadCode(
      await planned("V1__js.js", "export default async (ctx) => `js ${ctx.n}`;\n"),
    );
    assert.equal(typeof js, "function");
    assert.equal(await call(js, { n: 1 }), "js 1");
    const ts = await loadCode(
      await planned(
        "V2__ts.ts",
        "type Ctx = { n: number };\nexport default async function (ctx: Ctx): Promise<string> {\n" +
          "  return `ts ${ctx.n}`;\n}\n",
      ),
    );
    assert.equal(await call(ts, { n: 2 }), "ts 2");
  });

  it("runs nothing of a file when it is planned, its top-level code when it is loaded", async () => {
    const marker = `thawLoaded${crypto.randomUUID().replaceAll("-", "")}`;
    const file = await planned(
      "V3__top.js",
      `globalThis.${marker} = (globalThis.${marker} ?? 0) + 1;\nexport default () => {};\n`,
    );
    const global = globalThis as Record<string, unknown>;
    assert.equal(global[marker], undefined);
    await loadCode(file);
    assert.equal(global[marker], 1);
    // Loaded again unchanged (a beforeEachMigrate callback, once per file): evaluated once, on
    // every runtime, as a module is.
    await loadCode(file);
    await loadCode(await planned("V3__top.js", await readFile(file.source!, "utf8")));
    assert.equal(global[marker], 1);
    delete global[marker];
  });

  it("a file edited since it was planned: refused, never run under the checksum it had", async () => {
    const file = await planned("V14__moved.js", "export default () => 1;\n");
    await writeFile(file.source!, "export default () => 2;\n");
    const error = await loadError(file);
    assert.match(error.message, /^changed since the run read the migrations folder: run again/);
    // Line ends only: the same checksum, and it loads.
    await writeFile(file.source!, "export default () => 1;\r\n\r\n");
    assert.equal(call(await loadCode(file)), 1);
  });

  it("a missing default export: a CodeLoadError that says so, and how to write one", async () => {
    const error = await loadError(await planned("V4__none.js", "export const up = () => {};\n"));
    assert.equal(
      error.message,
      "its default export is missing, not a function: write export default async (ctx) => { ... }",
    );
  });

  it("a default export that is not a function: a CodeLoadError naming its type", async () => {
    for (
      const [name, text, type] of [
        ["V5__number.js", "export default 42;\n", "a number"],
        ["V6__object.ts", "export default { up: () => {} };\n", "a object"],
        ["V7__string.js", 'export default "SELECT 1";\n', "a string"],
      ]
    ) {
      const error = await loadError(await planned(name, text));
      assert.match(error.message, new RegExp(`^its default export is ${type}, not a function: `));
      assert.match(error.message, /write export default async \(ctx\) => \{ \.\.\. \}/);
    }
  });

  it("a given module: its default function, or the same refusal", async () => {
    const run = () => {};
    const base = await planned("V8__given.js", "export default () => {};\n");
    assert.equal(
      await loadCode({ ...base, code: { kind: "module", module: { default: run } } }),
      run,
    );
    const error = await loadError({
      ...base,
      code: { kind: "module", module: { default: 7 } as never },
    });
    assert.match(error.message, /its default export is a number, not a function/);
    const missing = await loadError({ ...base, code: { kind: "module", module: {} as never } });
    assert.match(missing.message, /its default export is missing/);
  });

  it("loadDown: the down export of a file or a given module, none, or a refusal", async () => {
    const file = await planned(
      "V9__down.js",
      "export default () => {};\nexport async function down() { return 'undone'; }\n",
    );
    assert.equal(await call((await loadDown(file))!), "undone");
    assert.equal(
      await loadDown(await planned("V10__up.js", "export default () => {};\n")),
      undefined,
    );
    const down = () => {};
    const given = { default: () => {}, down };
    assert.equal(await loadDown({ ...file, code: { kind: "module", module: given } }), down);
    await assert.rejects(
      loadDown({ ...file, code: { kind: "module", module: { default: down, down: 3 } as never } }),
      (error) =>
        error instanceof CodeLoadError && /its down export is a number/.test(error.message),
    );
  });

  it("a file that throws on import: the error is the cause, its line found there", async () => {
    const file = await planned(
      "V9__throws.js",
      "// one\nconst a = 1;\nthrow new Error(`imported ${a}`);\nexport default () => {};\n",
    );
    const error = await loadError(file);
    assert.equal(error.message, "could not be imported: Error: imported 1");
    assert.ok(error.cause instanceof Error);
    assert.equal(error.cause.message, "imported 1");
    assert.equal(lineIn(error.cause, file.source!), 3, String(error.cause.stack));
  });

  for (
    const [name, text] of [
      ["V10__broken.js", "// one\nconst a = 1;\nexport default ) (;\n"],
      ["V11__broken.ts", "// one\nconst a: number = 1;\nexport default ) (;\n"],
    ]
  ) {
    it(`a syntax error (${name}): the cause carries its line`, async () => {
      const file = await planned(name, text);
      const error = await loadError(file);
      assert.match(error.message, /^could not be imported: /);
      assert.notEqual(error.cause, undefined);
      const cause = error.cause as { stack?: string; message?: string };
      assert.equal(lineIn(error.cause, file.source!), 3, String(cause.stack ?? cause.message));
    });
  }

  it("a module it imports that is missing: a CodeLoadError naming it", async () => {
    const file = await planned(
      "V12__needs.js",
      "import { x } from './no_such_helper.js';\nexport default () => x;\n",
    );
    const error = await loadError(file);
    assert.match(error.message, /^could not be imported: .*no_such_helper/);
  });

  for (const extension of ["js", "ts"]) {
    it(`an edited .${extension} file at the same path is imported anew, with a new hash`, async () => {
      const name = `V13__edited_${extension}.${extension}`;
      const version = (n: number) => `export default () => ${n};\n`;
      const first = await planned(name, version(1));
      assert.equal(call(await loadCode(first)), 1);
      // Loaded again unchanged: the same module.
      assert.equal(call(await loadCode(first)), 1);
      const second = await planned(name, version(2));
      assert.notEqual(second.hash, first.hash);
      assert.notEqual(
        (second.code as { url: string }).url,
        (first.code as { url: string }).url,
      );
      assert.equal(call(await loadCode(second)), 2);
      const third = await planned(name, version(3));
      assert.equal(call(await loadCode(third)), 3);
      // Edited back: the first text's checksum and URL again, and what it says now.
      const back = await planned(name, version(1));
      assert.equal(back.hash, first.hash);
      assert.equal(call(await loadCode(back)), 1);
    });
  }
});
