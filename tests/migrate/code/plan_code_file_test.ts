import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { planCodeFile } from "../../../src/migrate/code/plan_code_file.ts";
import type { RuntimeInfo } from "../../../src/migrate/code/typescript_support.ts";
import type { CodeMigrationModule } from "../../../src/migrate/code/code_context.ts";
import { rawContentHash, sqlContentHash } from "../../../src/migrate/files/content_hash.ts";
import type { MigrationFile } from "../../../src/migrate/files/migration_files.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { planSqlFile } from "../../../src/migrate/sql/plan_sql_file.ts";
import { propertyOptions } from "../../property.ts";

const SOURCE_DIR = "/abs/migrations/main";
const encoder = new TextEncoder();

/** Runtimes that import TypeScript themselves: nothing is refused under them. */
const DENO: RuntimeInfo = runtime("deno", "2.9.5");

/** A runtime described by hand: `node` 20 as `node /app/cli.js -c config`, from `/app`. */
function runtime(
  name: RuntimeInfo["name"],
  version: string,
  more: Partial<RuntimeInfo> = {},
): RuntimeInfo {
  return {
    name,
    version,
    execArgv: [],
    nodeOptions: "",
    execPath: "/usr/bin/node",
    argv: ["/usr/bin/node", "/app/cli.js", "-c", "config"],
    cwd: "/app",
    ...more,
  };
}

/** A file as a folder walk reads it: bytes, the hash of the raw bytes, its absolute path. */
async function migrationFile(
  path: string,
  content: string | Uint8Array,
  // `null`: a file not read from a folder (`undefined` would take the default).
  source: string | null = `${SOURCE_DIR}/${path}`,
): Promise<MigrationFile> {
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  return {
    path,
    bytes,
    hash: await rawContentHash(bytes),
    ...(source === null ? {} : { source }),
  };
}

async function hashOf(text: string, path = "V3__x.js"): Promise<string> {
  return (await planCodeFile(await migrationFile(path, text), undefined, DENO)).hash;
}

/** What the checksum must not see: a leading BOM, CR line ends, the line ends at the end. */
function normalized(text: string): string {
  return text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").replace(/\n+$/, "");
}

// Text with line ends of every kind, BOMs and any code point (no lone surrogates: they have no
// UTF-8 form).
const piece = fc.oneof(
  fc.constantFrom("\n", "\r", "\r\n", "\uFEFF", " ", "x", "é"),
  fc.string({ unit: "binary", maxLength: 4 }),
);
const text = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(""));

describe("planCodeFile: the checksum", () => {
  it("ignores CRLF and CR line ends, a BOM and final line ends, as the .sql rule does", async () => {
    const body = "export default async (ctx) => {\n  await ctx.query('SELECT 1');\n};";
    const same = [
      body,
      `${body}\n`,
      `${body}\n\n\n`,
      body.replaceAll("\n", "\r\n"),
      `${body.replaceAll("\n", "\r\n")}\r\n`,
      body.replaceAll("\n", "\r"),
      `\uFEFF${body}\n`,
      `\uFEFF${body.replaceAll("\n", "\r\n")}\r\n\r\n`,
    ];
    const expected = await sqlContentHash(encoder.encode(body));
    for (const variant of same) {
      assert.equal(await hashOf(variant), expected, JSON.stringify(variant));
    }
    // The same bytes planned as a .sql file have the same checksum.
    const sql = await planSqlFile(await migrationFile("V3__x.sql", `${body}\r\n`), undefined);
    assert.equal(sql.hash, expected);
  });

  it("keeps the hash of the raw bytes as rawHash only when it differs", async () => {
    const plain = await planCodeFile(await migrationFile("V3__x.js", "a\nb"), undefined, DENO);
    assert.equal(plain.rawHash, undefined);
    const crlf = await migrationFile("V3__x.js", "a\r\nb\r\n");
    const planned = await planCodeFile(crlf, undefined, DENO);
    assert.equal(planned.rawHash, crlf.hash);
    assert.notEqual(planned.hash, crlf.hash);
    assert.equal(planned.runOnce, true);
    assert.equal(planned.path, "V3__x.js");
    assert.equal(planned.source, `${SOURCE_DIR}/V3__x.js`);
  });

  it("equals the .sql rule on any text, and is unchanged by line ends, a BOM, final line ends", async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.nat({ max: 3 }),
        fc.boolean(),
        async (body, newline, finals, bom) => {
          // A BOM added before a text that has one is a character of the text: not that variant.
          fc.pre(!(bom && body.startsWith("\uFEFF")));
          const hash = await hashOf(body);
          assert.equal(hash, await sqlContentHash(encoder.encode(body)));
          const variant = `${bom ? "\uFEFF" : ""}${body.replace(/\r\n?|\n/g, newline)}${
            newline.repeat(finals)
          }`;
          assert.equal(await hashOf(variant), hash, JSON.stringify([body, variant]));
        },
      ),
      propertyOptions(200),
    );
  });

  it("changes on any other edit: an inserted, deleted or replaced character", async () => {
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 2 }),
      insert: fc.oneof(fc.constantFrom("\n", "\r", "\uFEFF", " "), fc.string({ unit: "binary" })),
    });
    await fc.assert(
      fc.asyncProperty(text, edit, async (before, { at, remove, insert }) => {
        const i = before.length === 0 ? 0 : at % (before.length + 1);
        const after = before.slice(0, i) + insert + before.slice(i + remove);
        // Cut between the two halves of a surrogate pair: no longer text UTF-8 can hold.
        fc.pre(after.isWellFormed());
        const same = normalized(before) === normalized(after);
        assert.equal(
          (await hashOf(before)) === (await hashOf(after)),
          same,
          JSON.stringify([before, after]),
        );
      }),
      propertyOptions(200),
    );
  });
});

describe("planCodeFile: what it refuses", () => {
  it("bytes that are not UTF-8, naming the file", async () => {
    const file = await migrationFile("V3__x.js", Uint8Array.of(0x61, 0xff, 0x0a));
    await assert.rejects(planCodeFile(file, undefined, DENO), (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.equal(error.file, "V3__x.js");
      assert.equal(error.message, "V3__x.js: is not valid UTF-8");
      return true;
    });
  });

  it("a .ts file on a runtime with no TypeScript support: unrunnable, with the command that imports it", async () => {
    const file = await migrationFile("sub/V3__backfill.ts", "export default () => {};\n");
    // Planned all the same: status, and a run where it is applied already, need no import.
    const planned = await planCodeFile(file, undefined, runtime("node", "20.20.2"));
    assert.equal(
      planned.unrunnable,
      "Node 20.20.2 cannot import TypeScript: " +
        "run npx tsx cli.js -c config, or use Node 22.18 or later, or write it as " +
        "sub/V3__backfill.js",
    );
    // Node 22.12 is told its flag; another runtime only to write JavaScript.
    assert.match(
      (await planCodeFile(file, undefined, runtime("node", "22.12.0"))).unrunnable!,
      /run node --experimental-strip-types cli\.js -c config/,
    );
    assert.match(
      (await planCodeFile(file, undefined, runtime("other", "1.0.0"))).unrunnable!,
      /other cannot import TypeScript: write it as sub\/V3__backfill\.js/,
    );
  });

  it("a .ts file with TypeScript support is planned, a loader's included", async () => {
    const file = await migrationFile("V3__x.ts", "export default () => {};\n");
    for (
      const rt of [
        DENO,
        runtime("bun", "1.4.5"),
        runtime("node", "26.0.0", { typescriptFeature: "strip" }),
        runtime("node", "20.20.2", { execArgv: ["--import", "tsx"] }),
      ]
    ) {
      const planned = await planCodeFile(file, undefined, rt);
      assert.equal(planned.code.kind, "file", rt.name);
      assert.equal(planned.unrunnable, undefined, rt.name);
    }
  });

  it("a .js file never, whatever the runtime", async () => {
    const file = await migrationFile("V3__x.js", "export default () => {};\n");
    for (
      const rt of [
        runtime("node", "20.20.2"),
        runtime("node", "18.0.0"),
        runtime("node", "24.0.0", { typescriptFeature: false }),
        runtime("other", ""),
        DENO,
      ]
    ) {
      const planned = await planCodeFile(file, undefined, rt);
      assert.equal(planned.code.kind, "file", JSON.stringify(rt));
      assert.equal(planned.unrunnable, undefined, JSON.stringify(rt));
    }
  });

  it("a file read from no folder with no module given for it", async () => {
    const file = await migrationFile("V3__x.js", "export default () => {};\n", null);
    await assert.rejects(planCodeFile(file, undefined, DENO), (error: unknown) => {
      assert.ok(error instanceof MigrationFileError, String(error));
      assert.match(error.message, /^V3__x\.js: was not read from a folder, .*the modules option/);
      return true;
    });
  });
});

describe("planCodeFile: where its function comes from", () => {
  it("the file's URL, with ?thaw= and the first 16 hex digits of its checksum", async () => {
    const source = "/abs/a b/é#1/main/V3__x.js";
    const file = await migrationFile("V3__x.js", "export default () => {};\n", source);
    const planned = await planCodeFile(file, undefined, DENO);
    assert.equal(planned.code.kind, "file");
    const url = new URL((planned.code as { url: string }).url);
    assert.match(url.search, /^\?thaw=[0-9a-f]{16}$/);
    assert.equal(url.search, `?thaw=${planned.hash.slice(0, 16)}`);
    assert.equal(url.hash, "");
    url.search = "";
    assert.equal(url.href, pathToFileURL(source).href);
    // An edit gives a new URL: an edited file is imported anew.
    const edited = await planCodeFile(
      await migrationFile("V3__x.js", "export default () => 1;\n", source),
      undefined,
      DENO,
    );
    assert.notEqual((edited.code as { url: string }).url, (planned.code as { url: string }).url);
  });

  it("a given module, in place of the file: no URL, and a .ts file not refused", async () => {
    const module: CodeMigrationModule = { default: () => {} };
    for (const source of [`${SOURCE_DIR}/V3__x.ts`, null]) {
      const file = await migrationFile("V3__x.ts", "export default () => {};\n", source);
      const planned = await planCodeFile(file, module, runtime("node", "20.20.2"));
      assert.equal(planned.code.kind, "module");
      assert.equal(planned.unrunnable, undefined);
      assert.equal((planned.code as { module: unknown }).module, module);
      assert.equal(planned.source, source ?? undefined);
      assert.equal(planned.hash, await sqlContentHash(file.bytes));
    }
  });

  it("not-UTF-8 bytes are refused even with a module given", async () => {
    const file = await migrationFile("V3__x.js", Uint8Array.of(0xc3));
    await assert.rejects(
      planCodeFile(file, { default: () => {} }, DENO),
      /V3__x\.js: is not valid UTF-8/,
    );
  });
});
