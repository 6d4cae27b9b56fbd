// Every TypeScript block of the README and of docs/ that asserts what it shows (it imports
// node:assert) runs here, as a user would paste it, with `@thaw/thaw` pointing at this checkout: a README example
// that stops matching the library fails the suite on every runtime.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { SQLITE } from "../sqlite.ts";

const root = new URL("../../", import.meta.url);
// The README and every page under docs/.
const docs = [
  "README.md",
  ...readdirSync(new URL("docs/", root)).filter((f) => f.endsWith(".md"))
    .sort().map((f) => `docs/${f}`),
];
// Inside the checkout (and ignored by git), so that the blocks' own imports (hono/cors, zod)
// resolve as in an app.
const dir = new URL(".tmp/readme-examples/", root);
// Every entry point of deno.json, as a user's import names it ("@thaw/thaw", "@thaw/thaw/server"),
// to its file in this checkout, relative to `dir`.
const { exports } = JSON.parse(readFileSync(new URL("deno.json", root), "utf8")) as {
  exports: Record<string, string>;
};
const local = (code: string) =>
  code.replace(/"@thaw\/thaw(\/[a-z-]+)?"/g, (specifier, sub: string | undefined) => {
    const file = exports[`.${sub ?? ""}`];
    return file === undefined ? specifier : JSON.stringify(`../../${file.replace(/^\.\//, "")}`);
  });

interface Block {
  readonly heading: string;
  readonly line: number;
  readonly code: string;
}

function assertingBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split("\n");
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,4} /.test(lines[i])) heading = lines[i].replace(/^#+ /, "");
    if (lines[i] !== "```ts") continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== "```") end++;
    const code = lines.slice(start, end).join("\n");
    if (code.includes('import assert from "node:assert/strict"')) {
      blocks.push({ heading, line: start + 1, code });
    }
    i = end;
  }
  return blocks;
}

describe("the asserting examples of the README and docs/", () => {
  const blocks = docs.flatMap((doc) =>
    assertingBlocks(readFileSync(new URL(doc, root), "utf8")).map((b) => ({ ...b, doc }))
  );

  it("are there", () => {
    assert.ok(blocks.length >= 5, `found ${blocks.length}`);
  });

  for (const block of blocks) {
    // A block on SQLite (node:sqlite, or a datasource URL) runs where the runtime has node:sqlite
    // (all but Node before 22.13): there, the runtime's lack is what is checked.
    if (SQLITE === undefined && /"node:sqlite"|"sqlite:/.test(block.code)) {
      it(`cannot run here (no node:sqlite): "${block.heading}", ${block.doc} line ${block.line}`, async () => {
        await assert.rejects(import("node:sqlite"), { code: "ERR_UNKNOWN_BUILTIN_MODULE" });
      });
      continue;
    }
    it(`run: "${block.heading}", ${block.doc} line ${block.line}`, async () => {
      mkdirSync(dir, { recursive: true });
      const file = new URL(`${block.doc.replace(/\W/g, "_")}_line_${block.line}.ts`, dir);
      writeFileSync(file, local(block.code));
      await import(pathToFileURL(file.pathname).href);
    });
  }
});
