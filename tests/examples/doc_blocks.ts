// The asserting TypeScript blocks of the README and of docs/ (those that import node:assert), and
// how one runs: as a user would paste it, with `@thaw/thaw` pointing at this checkout.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";

const root = new URL("../../", import.meta.url);
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

/** One asserting block: the page, the heading it is under and its first line. */
export interface DocBlock {
  readonly doc: string;
  readonly heading: string;
  readonly line: number;
  readonly code: string;
}

function assertingBlocks(doc: string, text: string): DocBlock[] {
  const blocks: DocBlock[] = [];
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
      blocks.push({ doc, heading, line: start + 1, code });
    }
    i = end;
  }
  return blocks;
}

/** The blocks of `doc` (a path from the checkout's root) fenced as `language`, each one text. */
export function fencedBlocks(doc: string, language: string): string[] {
  const lines = readFileSync(new URL(doc, root), "utf8").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```" + language) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== "```") end++;
    out.push(lines.slice(i + 1, end).join("\n"));
    i = end;
  }
  return out;
}

/** Every asserting block of the README and of docs/, page by page. */
export function docBlocks(): DocBlock[] {
  const docs = [
    "README.md",
    ...readdirSync(new URL("docs/", root)).filter((f) => f.endsWith(".md"))
      .sort().map((f) => `docs/${f}`),
  ];
  return docs.flatMap((doc) => assertingBlocks(doc, readFileSync(new URL(doc, root), "utf8")));
}

/** Whether a block needs the Kafka broker: it imports the Kafka entry point. */
export const needsKafka = (block: DocBlock): boolean => block.code.includes('"@thaw/thaw/kafka"');

/** Whether a block needs S3Proxy (tools/s3proxy.sh): it configures an `s3://` store. */
export const needsS3 = (block: DocBlock): boolean => block.code.includes("s3://");

/**
 * Whether a block needs SQLite (node:sqlite, or a datasource URL): such a block runs where the
 * runtime has node:sqlite (all but Node before 22.13).
 */
export const needsSqlite = (block: DocBlock): boolean =>
  /"node:sqlite"|"sqlite:|`sqlite:/.test(block.code);

/**
 * Runs one block as a module of its own. Its file is named for the process too: `npm test` runs
 * the runtimes side by side, and one writing a block's file while another imports it would hand
 * the other a file cut short.
 */
export async function runBlock(block: DocBlock): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const name = `${block.doc.replace(/\W/g, "_")}_line_${block.line}_${process.pid}.ts`;
  const file = new URL(name, dir);
  writeFileSync(file, local(block.code));
  try {
    await import(pathToFileURL(file.pathname).href);
  } finally {
    rmSync(file, { force: true });
  }
}
