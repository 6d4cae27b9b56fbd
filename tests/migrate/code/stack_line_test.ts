import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { lineAt, lineIn } from "../../../src/migrate/code/stack_line.ts";
import { propertyOptions } from "../../property.ts";
import { RUNTIME } from "../../runtime.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

const FILE = "/abs/main/V3__backfill.ts";
const URL_OF_FILE = pathToFileURL(FILE).href;

/** An error as a runtime hands it over: a message and a stack. */
function thrown(stack: string | undefined, message = "boom"): Error {
  const error = new Error(message);
  if (stack === undefined) delete (error as { stack?: string }).stack;
  else error.stack = stack;
  return error;
}

describe("lineIn: the stack formats of the three runtimes", () => {
  const cases: [string, string][] = [
    [
      "V8, a named frame with the query",
      `    at default (${URL_OF_FILE}?thaw=ab12cd34ef567890:12:9)`,
    ],
    ["V8, an async frame", `    at async default (${URL_OF_FILE}?thaw=ab12cd34ef567890:12:9)`],
    ["V8, Node's Module.default", `    at Module.default (${URL_OF_FILE}?thaw=ab12:12:9)`],
    ["V8, an anonymous frame", `    at ${URL_OF_FILE}:12:9`],
    ["V8, an anonymous async frame", `    at async ${URL_OF_FILE}?thaw=ab12:12:9`],
    ["a URL with a #hash", `    at default (${URL_OF_FILE}#top:12:9)`],
    ["Bun, a plain path", `    at default (${FILE}:12:9)`],
    ["Bun, its own function names", `    at V3__backfill_default (${FILE}:12:13)`],
    ["tsx on Node, a plain path", `    at Object.default (${FILE}:12:9)`],
    ["JavaScriptCore's fn@path", `default@${FILE}:12:9`],
    ["JavaScriptCore, anonymous", `@${FILE}:12:9`],
    [
      "Node's SyntaxError header, a URL",
      `${URL_OF_FILE}:12\nexport default ) (;\n\nSyntaxError: x`,
    ],
    ["Node's SyntaxError header, a path", `${FILE}:12\nconst a: number = ) (;\n\nSyntaxError: x`],
    [
      "esbuild (tsx), a path then : ERROR",
      `Transform failed with 1 error:\n${FILE}:12:15: ERROR: x`,
    ],
  ];
  for (const [name, frame] of cases) {
    it(name, () => {
      assert.equal(
        lineIn(thrown(`Error: boom\n${frame}\n    at async run (file:///x.ts:1:1)`), FILE),
        12,
      );
    });
  }

  it("Deno's SyntaxError: the location inside the message, in an encoded URL", () => {
    const message = "SyntaxError: Expression expected\n  |\n12 | export default ) (;\n  |" +
      `                ~\n    at ${URL_OF_FILE}?thaw=ab12:12:16`;
    assert.equal(lineIn(thrown(`TypeError: ${message}\n    at async file:///r.ts:5:19`), FILE), 12);
    assert.equal(lineIn(thrown(undefined, message), FILE), 12);
  });

  it("Deno's frames, with the URL decoded: spaces, `?`, `#` and `%` as they are", () => {
    const file = "/tmp/a (b) c:d é/w?x#y%z%20q%4/V3__x.js";
    const frame = `    at Module.default (file://${file}?thaw=ab12:4:9)`;
    assert.equal(lineIn(thrown(`Error: boom\n${frame}\n    at async file:///r.mjs:4:39`), file), 4);
  });

  it("Bun's BuildMessage: no stack, a position", () => {
    const built = {
      name: "BuildMessage",
      message: "Unexpected )",
      position: { file: FILE, line: 3 },
    };
    assert.equal(lineIn(built, FILE), 3);
    assert.equal(
      lineIn({ ...built, position: { file: "/abs/other.ts", line: 3 } }, FILE),
      undefined,
    );
  });

  it("the message when the stack names no place in the file", () => {
    const error = thrown("Error: x\n    at q (node:internal/x:1:2)", `failed at ${FILE}:7:1`);
    assert.equal(lineIn(error, FILE), 7);
  });
});

describe("lineIn: the first frame in the file", () => {
  it("skips a frame in a helper module before the file's", () => {
    const stack = [
      "Error: boom",
      "    at helper (file:///abs/lib/helper.ts:40:11)",
      `    at default (${URL_OF_FILE}?thaw=ab12:12:9)`,
      `    at default (${URL_OF_FILE}?thaw=ab12:30:3)`,
      "    at async runCode (file:///abs/src/load_code.ts:9:5)",
    ].join("\n");
    assert.equal(lineIn(thrown(stack), FILE), 12);
    assert.equal(lineAt(stack, FILE), 12);
  });

  it("undefined when no frame is in the file, or nothing is there to read", () => {
    const stack =
      "Error: boom\n    at helper (file:///abs/lib/helper.ts:40:11)\n    at node:internal/x:1:1";
    assert.equal(lineIn(thrown(stack), FILE), undefined);
    assert.equal(lineIn(thrown("Error: boom"), FILE), undefined);
    assert.equal(lineIn(thrown(undefined), FILE), undefined);
    assert.equal(lineIn("boom", FILE), undefined);
    assert.equal(lineIn(null, FILE), undefined);
    assert.equal(lineIn(undefined, FILE), undefined);
    assert.equal(lineIn({ stack: 12, message: null }, FILE), undefined);
    assert.equal(lineAt(undefined, FILE), undefined);
    // A line number is no location unless a path is before it.
    assert.equal(lineIn(thrown(`Error: ${FILE}\n    at x (:12:9)`), FILE), undefined);
  });

  it("reads a message of megabytes full of URLs and line numbers at its start and its end", () => {
    // Each `file:` could begin a location and each `:1` end one: tried pair by pair over the whole
    // text, this took hours.
    const junk = "file:///abs/main/x?:1 ".repeat(100_000);
    assert.equal(lineIn(thrown(`Error: ${junk}`, junk), FILE), undefined);
    const frame = `\n    at default (${URL_OF_FILE}?thaw=0123456789abcdef:12:9)`;
    assert.equal(lineIn(thrown(`Error: ${junk}${frame}`, junk), FILE), 12);
    assert.equal(lineAt(`${FILE}:7:1 ${junk}`, FILE), 7);
    // Between a long text's first and last 32 KiB, nothing is read.
    assert.equal(lineAt(`${junk} ${FILE}:7:1 ${junk}`, FILE), undefined);
    // Many `?`s in reach of many `file:`s: each pair of a `file:` and a `?` is parsed once at most.
    const deep = `/abs/${"d".repeat(60)}/V3__backfill.ts`;
    assert.equal(lineAt(` file:${"s?:1,".repeat(40)}`.repeat(2000), deep), undefined);
    // Where the two parts meet, no location is made: not a line number cut short, not a path
    // of another file cut to the file's.
    const head = 32 * 1024;
    const cut = `${"x".repeat(head - FILE.length - 4)} ${FILE}:12`;
    assert.equal(cut.length, head);
    assert.equal(lineAt(`${cut}3:4 ${"y".repeat(2 * head)}`, FILE), undefined);
    const tail = `${FILE}:55:1 ${"z".repeat(head - FILE.length - 6)}`;
    assert.equal(tail.length, head);
    assert.equal(lineAt(`${"y".repeat(2 * head)} /other${tail}`, FILE), undefined);
  });

  it("a getter that throws is nothing to read", () => {
    const error = {
      get stack(): string {
        throw new Error("no");
      },
      message: `at ${FILE}:5:1`,
    };
    assert.equal(lineIn(error, FILE), 5);
  });

  it("a path that begins or ends like the file's is another file", () => {
    const file = "/a/V1__x.ts";
    for (
      const other of ["/a/V1__x.ts.bak", "/b/a/V1__x.ts", "/a/V1__x.tsx", "/a/XV1__x.ts"]
    ) {
      const stacks = [
        `Error\n    at default (${other}:3:1)`,
        `Error\n    at default (${pathToFileURL(other).href}?thaw=1:3:1)`,
        `Error\n    at default (file://${other}:3:1)`,
      ];
      for (const stack of stacks) assert.equal(lineAt(stack, file), undefined, stack);
    }
    assert.equal(
      lineAt(`Error\n    at default (/a/V1__x.ts.bak:3:1)\n    at (${file}:8:2)`, file),
      8,
    );
  });

  it("a folder with spaces, parentheses, colons and non-ASCII letters", () => {
    const file = "/tmp/a (b) c:12:9) é/main/V3__backfill.ts";
    const url = pathToFileURL(file).href;
    assert.equal(lineAt(`Error\n    at default (${file}:12:9)`, file), 12);
    assert.equal(lineAt(`Error\n    at default (${url}?thaw=ab:13:9)`, file), 13);
    assert.equal(lineAt(`Error\n    at default (file://${file}?thaw=ab:14:9)`, file), 14);
    assert.equal(lineAt(`Error\n    at ${file}:15:9`, file), 15);
  });
});

describe("lineIn: frames built from any folder names", () => {
  // Any character but `/` and NUL; `.`, `..` and empty names are no folders of their own (a URL
  // resolves them away).
  const folder = fc.string({ unit: "binary", minLength: 1, maxLength: 8 })
    .filter((name) => !/[/\0]/.test(name) && name !== "." && name !== "..");
  const layout = fc.record({
    folders: fc.array(folder, { minLength: 1, maxLength: 4 }),
    line: fc.integer({ min: 1, max: 100_000 }),
    column: fc.integer({ min: 1, max: 500 }),
  });

  it("V8's frame with the URL from pathToFileURL gives back its line", () => {
    fc.assert(
      fc.property(layout, ({ folders, line, column }) => {
        const file = `/${folders.join("/")}/V3__backfill.ts`;
        const stack = [
          "Error: boom",
          "    at helper (file:///elsewhere/helper.ts:40:11)",
          `    at async default (${
            pathToFileURL(file).href
          }?thaw=ab12cd34ef567890:${line}:${column})`,
        ].join("\n");
        assert.equal(lineIn(thrown(stack), file), line);
      }),
      propertyOptions(200),
    );
  });

  it("Bun's plain path and Deno's decoded URL give back their line", () => {
    fc.assert(
      fc.property(layout, ({ folders, line, column }) => {
        const file = `/${folders.join("/")}/V3__backfill.ts`;
        assert.equal(lineAt(`Error\n    at default (${file}:${line}:${column})`, file), line);
        assert.equal(
          lineAt(`Error\n    at Module.default (file://${file}?thaw=ab12:${line}:${column})`, file),
          line,
        );
      }),
      propertyOptions(200),
    );
  });
});

describe(`lineIn: errors thrown by files imported on ${RUNTIME}`, () => {
  let root = "";
  let folder = "";

  const suiteDir = suiteTempDirs();
  before(async () => {
    root = await suiteDir("thaw-stack-line-");
    // No `?`: Bun cannot import a file from a folder whose name has one.
    folder = join(root, "a (b) c:d é", "main");
    await mkdir(folder, { recursive: true });
  });

  /** Writes `text` as `name` in the migrations folder and imports it as Thaw will, with a query. */
  async function load(name: string, text: string): Promise<{ file: string; module: unknown }> {
    const file = join(folder, name);
    await writeFile(file, text);
    const url = pathToFileURL(file);
    url.search = "thaw=ab12cd34ef567890";
    return { file, module: await import(url.href) };
  }

  /** What the file's default export throws (or rejects with). */
  async function failure(name: string, text: string): Promise<{ file: string; error: unknown }> {
    const { file, module } = await load(name, text);
    try {
      await (module as { default: (ctx: unknown) => unknown }).default({});
    } catch (error) {
      return { file, error };
    }
    throw new Error(`${name} did not throw`);
  }

  it("a .js file that throws after an await", async () => {
    const { file, error } = await failure(
      "V3__backfill.js",
      "// one\nexport default async function (ctx) {\n  await null;\n  throw new Error('boom');\n}\n",
    );
    assert.equal(lineIn(error, file), 4, String((error as Error).stack));
  });

  it("a .ts file with types before the throw", async () => {
    const { file, error } = await failure(
      "V4__typed.ts",
      [
        "// one",
        "type Ctx = { readonly n?: number };",
        "interface Shape {",
        "  readonly a: string;",
        "}",
        "export default async function (ctx: Ctx): Promise<void> {",
        "  const shape: Shape = { a: String(ctx.n) };",
        "  await null;",
        "  throw new Error(shape.a);",
        "}",
        "",
      ].join("\n"),
    );
    assert.equal(lineIn(error, file), 9, String((error as Error).stack));
  });

  it("a helper module's throw is placed at the file's call of it", async () => {
    await writeFile(
      join(folder, "helper.js"),
      "export function fail() {\n  throw new Error('in helper');\n}\n",
    );
    const { file, error } = await failure(
      "V5__helped.js",
      "import { fail } from './helper.js';\n\nexport default async function (ctx) {\n  fail();\n}\n",
    );
    assert.equal(lineIn(error, file), 4, String((error as Error).stack));
  });

  it("a stack captured in a helper it calls (ctx.query's call site)", async () => {
    // An async function, as migrations are: JavaScriptCore drops the frame of a plain function's
    // `return ctx.query(…)`, a proper tail call.
    const { file, module } = await load(
      "V6__captured.js",
      "// one\nexport default async function (ctx) {\n  await ctx.query('SELECT 1');\n}\n",
    );
    let stack: string | undefined;
    await (module as { default: (ctx: unknown) => Promise<void> }).default({
      query: () => {
        stack = new Error().stack;
        return Promise.resolve();
      },
    });
    assert.equal(lineAt(stack, file), 3, stack);
  });

  it("a file that does not parse", async () => {
    const file = join(folder, "V7__broken.js");
    await writeFile(file, "// one\nconst a = 1;\nexport default ) (;\n");
    const error = await import(`${pathToFileURL(file).href}?thaw=1`).then(
      () => assert.fail("it parsed"),
      (error: unknown) => error,
    );
    // Node's own loader gives an ES module's SyntaxError no location; tsx's esbuild (as the suite
    // runs Node), Deno and Bun each do.
    assert.equal(lineIn(error, file), 3, String((error as Error).stack ?? error));
  });
});
