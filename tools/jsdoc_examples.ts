// Refuses a decorator line in a JSDoc example: TypeScript's JSDoc parser starts a tag at every
// `@` that opens a line of a `/** */` comment, code fence or not (upstream behaviour), so an
// example with `@Service()` on a line of its own shows in an editor's hover cut into bogus tags.
// The runnable decorator examples live in docs/*.md, whose blocks the lint compiles and the
// tests run; a JSDoc comment links there. Read: every entry point of deno.json and src/.
//
// Run: deno run --allow-read tools/jsdoc_examples.ts [root]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { checkedFiles } from "./entry_points.ts";

/** A line of a JSDoc example that opens with `@`, 1-based, with its text. */
export interface DecoratorLine {
  readonly line: number;
  readonly text: string;
}

/** The lines inside a fenced block of a `/** *\/` comment whose text opens with `@`. */
export function decoratorLines(source: string): DecoratorLine[] {
  const found: DecoratorLine[] = [];
  let inComment = false;
  let inFence = false;
  for (const [i, line] of source.split("\n").entries()) {
    if (!inComment) {
      inComment = /^\s*\/\*\*/.test(line) && !line.includes("*/");
      inFence = false;
      continue;
    }
    if (line.includes("*/")) {
      inComment = false;
      continue;
    }
    const text = line.replace(/^\s*\*/, "");
    if (/^\s*```/.test(text)) inFence = !inFence;
    else if (inFence && /^\s*@/.test(text)) found.push({ line: i + 1, text: text.trim() });
  }
  return found;
}

if (import.meta.main) {
  const root = process.argv[2] ?? fileURLToPath(new URL("../", import.meta.url));
  const files = checkedFiles(root);
  const offenders = files.flatMap((file) =>
    decoratorLines(readFileSync(join(root, file), "utf8")).map(({ line, text }) =>
      `  ${file}:${line}: ${text}`
    )
  );
  if (offenders.length > 0) {
    console.error(
      "A JSDoc example has a line that opens with `@`, which an editor's hover reads as a tag " +
        "(tools/jsdoc_examples.ts says why). Move the example to its page in docs/ and link " +
        "that section from the comment:\n" + offenders.join("\n"),
    );
    process.exit(1);
  }
  console.log(`JSDoc examples: no decorator line, in ${files.length} module(s)`);
}
