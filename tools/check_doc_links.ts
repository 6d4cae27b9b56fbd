// Checks the given markdown files: every relative link reaches a file of the checkout, and every
// `#anchor` a heading of its page (GitHub's slugs); no page cites the project's internal notes
// (the spec's sections, its issues or its reference notes), which a user cannot follow. Given
// TypeScript modules (or folders of them, ending in `/`), checks the same of each guide their
// comments name, `docs/<page>.md#<anchor>` or `DOCS_URL` + `<page>.md#<anchor>`; a
// `@see` tag, and any JSDoc of an entry point, must name it by its absolute URL: the package does
// not ship `docs/`, and a user reads those comments on the package's pages or in an editor.
//
// Run: `deno run --allow-read tools/check_doc_links.ts README.md CONTRIBUTING.md docs/*.md`, and
// the entry points and `src/` for the modules' links.

/** Where the guides are read from outside the checkout: the repository's `docs/` on GitHub. */
export const DOCS_URL = "https://github.com/thaw/thaw/blob/main/docs/";

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

const escaped = DOCS_URL.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// A guide named in a comment: by its absolute URL, or (group 1 empty) by its repository path.
const GUIDE = new RegExp(
  `(?:(${escaped})|(?<![\\w./-])docs/)([\\w-]+\\.md)(?:#([\\w-]+))?`,
  "g",
);

/**
 * What is wrong with the guides the comments of the module at `path` (from the checkout's root)
 * name: a page `page` does not give (it answers a page's text, or `undefined` for no such page),
 * a heading it lacks, or a relative link where a user reads the comment. Pure: the caller reads.
 */
export function moduleLinkProblems(
  path: string,
  text: string,
  page: (name: string) => string | undefined,
): { problems: string[]; links: number } {
  const problems: string[] = [];
  let links = 0;
  // An entry point's JSDoc is the package's front page; a module's under src/ is shown with the
  // symbols it documents, and an `@see` is always a link out.
  const entry = !path.includes("/");
  let jsdoc = false;
  for (const [i, line] of text.split("\n").entries()) {
    if (/^\s*\/\*\*/.test(line)) jsdoc = true;
    for (const match of line.matchAll(GUIDE)) {
      const [target, absolute, name, anchor] = match;
      links++;
      const where = `${path}:${i + 1}: ${target}`;
      if (
        absolute === undefined && jsdoc &&
        (entry || /@see\s+$/.test(line.slice(0, match.index)))
      ) {
        problems.push(
          `${where}: the package does not ship docs/: write ${DOCS_URL}${name}` +
            (anchor === undefined ? "" : `#${anchor}`),
        );
        continue;
      }
      const body = page(name);
      if (body === undefined) problems.push(`${where}: no such file (docs/${name})`);
      else if (anchor !== undefined && !anchorsOf(body).has(anchor)) {
        problems.push(`${where}: docs/${name} has no heading for #${anchor}`);
      }
    }
    if (line.includes("*/")) jsdoc = false;
  }
  return { problems, links };
}

// A module's links, checked against the pages of the checkout.
async function checkModule(path: string): Promise<void> {
  const text = await read(path);
  const pages = new Map<string, string | undefined>();
  for (const [, , name] of text.matchAll(GUIDE)) {
    if (!pages.has(name)) pages.set(name, await read(`docs/${name}`).catch(() => undefined));
  }
  const found = moduleLinkProblems(path, text, (name) => pages.get(name));
  problems.push(...found.problems);
  links += found.links;
}

let links = 0;
let modulesRead = 0;

async function main(): Promise<void> {
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
    `docs: ${links} link(s) reach their file and heading, in ` +
      `${
        Deno.args.filter((arg) => arg.endsWith(".md")).length
      } page(s) and ${modulesRead} module(s)`,
  );
}

if (import.meta.main) await main();
