// Every entry point of deno.json imported alone, in a fresh process of the runtime running the
// tests, and used for what it is for (tests/fixtures/entry_alone.ts). The packed npm package's
// entry points are tried the same way under plain Node in tests/npm/package_test.ts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { scriptCommand } from "./runtime.ts";
import { tempDir } from "./temp_dir.ts";

const root = new URL("../", import.meta.url);
const { exports } = JSON.parse(await readFile(new URL("deno.json", root), "utf8")) as {
  exports: Record<string, string>;
};

describe("entry points, each imported alone", () => {
  it("deno.json names the default entry and the others beside it", () => {
    assert.deepEqual(Object.keys(exports).sort(), [
      ".",
      "./actuator",
      "./broadcast",
      "./cache-redis",
      "./cli",
      "./config",
      "./data",
      "./jobs",
      "./kafka",
      "./lock-sql",
      "./logging",
      "./migrate",
      "./openapi",
      "./scan",
      "./search",
      "./security",
      "./server",
      "./storage",
      "./tasks",
      "./types",
    ]);
  });

  for (const [name, file] of Object.entries(exports)) {
    it(`${name} (${file}) works in a process that loads nothing else of Thaw first`, async () => {
      await using dir = await tempDir("thaw-entry-");
      const [command, args] = scriptCommand(
        fileURLToPath(new URL("tests/fixtures/entry_alone.ts", root)),
        [name, new URL(file, root).href, new URL(exports["."], root).href, dir.path],
      );
      const { stdout } = await promisify(execFile)(command, args, { encoding: "utf8" })
        .catch((error) => {
          throw new Error(`${name}: exit ${error.code}\n${error.stdout}${error.stderr}`);
        });
      assert.equal(stdout.trim().split("\n").at(-1), `ok ${name}`);
    });
  }
});

// The names an `export { ... } from` or `export type { ... } from` list of `text` gives out.
function exportedNames(text: string): string[] {
  return [...text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap(([, list]) =>
    list.split(",").map((name) => name.trim().replace(/^type /, "").split(/\s+as\s+/).at(-1)!)
      .filter((name) => name !== "")
  );
}

describe("the default entry point's surface", () => {
  it("mod.ts gives out at most 100 names, each once, by list only", async () => {
    const text = await readFile(new URL("mod.ts", root), "utf8");
    // A star export would give out names no list shows, and a declaration one no list counts.
    assert.doesNotMatch(
      text,
      /^export \*|^export (?:async |abstract )?(?:const|let|function|class|interface|type \w+ =|enum)/m,
    );
    const names = exportedNames(text);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.length <= 100, `mod.ts exports ${names.length} names: ${names.join(", ")}`);
  });

  it("the decorators' own types (*Decorator, *For) are in types.ts, not mod.ts", async () => {
    const mod = exportedNames(await readFile(new URL("mod.ts", root), "utf8"));
    const types = exportedNames(await readFile(new URL("types.ts", root), "utf8"));
    const signatureTypes = (names: string[]) => names.filter((n) => /(?:Decorator|For)$/.test(n));
    assert.deepEqual(signatureTypes(mod), []);
    for (const name of ["SseMappingFor", "WebSocketMappingFor", "MappingFor", "CacheDecorator"]) {
      assert.ok(types.includes(name), `${name} is not in types.ts`);
    }
  });
});
