// Checks the given markdown files: every relative link reaches a file of the checkout, and every
// `#anchor` a heading of its page (GitHub's slugs); no page cites the project's internal notes
// (the spec's sections, its issues or its reference notes), which a user cannot follow. Given
// TypeScript modules (or folders of them, ending in `/`), checks the same of each
// `docs/<page>.md#<anchor>` their comments name: a JSDoc comment's link to its guide.
//
// Run: `deno run --allow-read tools/check_doc_links.ts README.md CONTRIBUTING.md docs/*.md`, and
// the entry points and `src/` for the modules' links.

const root = new URL("../", import.meta.url);

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    const heading = fence ? null : /^#{1,6} (.*)$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1].replace(/`/g, ""));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

// Words that name the project's internal notes, not anything a user has.
const INTERNAL = /\bseed(?:\.md| section| \d)|reference[- ]notes|\bissue #?\d+/i;

const problems: string[] = [];
const texts = new Map<string, string>();
const read = async (path: string) => {
  if (!texts.has(path)) texts.set(path, await Deno.readTextFile(new URL(path, root)));
  return texts.get(path)!;
};

// The modules of the folders given, as paths from the root.
async function modules(path: string): Promise<string[]> {
  if (!path.endsWith("/")) return [path];
  const found: string[] = [];
  for await (const entry of Deno.readDir(new URL(path, root))) {
    const child = `${path}${entry.name}${entry.isDirectory ? "/" : ""}`;
    if (entry.isDirectory) found.push(...await modules(child));
    else if (entry.name.endsWith(".ts")) found.push(child);
  }
  return found.sort();
}

// A module's links are repository paths, written in its comments.
async function checkModule(path: string): Promise<void> {
  const lines = (await read(path)).split("\n");
  for (const [i, line] of lines.entries()) {
    for (const [target, page, anchor] of line.matchAll(/\bdocs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
      links++;
      let body: string;
      try {
        body = await read(`docs/${page}`);
      } catch {
        problems.push(`${path}:${i + 1}: ${target}: no such file`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(body).has(anchor)) {
        problems.push(`${path}:${i + 1}: ${target}: docs/${page} has no heading for #${anchor}`);
      }
    }
  }
}

let links = 0;
let modulesRead = 0;
for (const arg of Deno.args.filter((arg) => arg.endsWith(".ts") || arg.endsWith("/"))) {
  for (const path of await modules(arg)) {
    modulesRead++;
    await checkModule(path);
  }
}
for (const doc of Deno.args.filter((arg) => arg.endsWith(".md"))) {
  const text = await read(doc);
  const lines = text.split("\n");
  let fence = false;
  for (const [i, line] of lines.entries()) {
    if (line.startsWith("```")) fence = !fence;
    if (INTERNAL.test(line)) {
      problems.push(`${doc}:${i + 1}: cites an internal note: ${line.trim()}`);
    }
    if (fence) continue;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      links++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const file = path === "" ? doc : new URL(path, new URL(doc, root)).pathname.slice(
        new URL(root).pathname.length,
      );
      let body: string;
      try {
        const info = await Deno.stat(new URL(file, root));
        if (info.isDirectory || anchor === undefined) continue;
        body = await read(file);
      } catch {
        problems.push(`${doc}:${i + 1}: ${target}: no such file (${file})`);
        continue;
      }
      if (!anchorsOf(body).has(anchor)) {
        problems.push(`${doc}:${i + 1}: ${target}: ${file} has no heading for #${anchor}`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join("\n"));
  Deno.exit(1);
}
console.log(
  `docs: ${links} relative link(s) reach their file and heading, in ` +
    `${Deno.args.filter((arg) => arg.endsWith(".md")).length} page(s) and ${modulesRead} module(s)`,
);
