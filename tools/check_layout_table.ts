// Checks CONTRIBUTING.md's layout table against the tree, so that a new folder of src/ cannot go
// unlisted and a moved one cannot leave a row pointing nowhere:
// 1. every folder under src/ that holds a module (`.ts`), at any depth, is named in the table's
//    Path column, as a path of its own (`src/migrate/code`, not only inside its parent's row);
// 2. every path the Path column names exists, folders and files alike.
// Only the first table after the `## Layout` heading is read; a Path cell may name several
// paths, each in backticks.
// Reads files only: deno run --allow-read tools/check_layout_table.ts
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The paths named in the Path column of the table under `## Layout` in `markdown`, in order. */
export function layoutTablePaths(markdown: string): string[] {
  const lines = markdown.split("\n");
  const heading = lines.findIndex((line) => /^##\s+Layout\s*$/.test(line));
  if (heading < 0) return [];
  const paths: string[] = [];
  let inTable = false;
  for (const line of lines.slice(heading + 1)) {
    if (/^#{1,2}\s/.test(line)) break;
    if (!line.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cell = line.split("|")[1];
    // The header row and the separator row name no path in backticks.
    for (const [, path] of cell.matchAll(/`([^`]+)`/g)) paths.push(path.replace(/\/$/, ""));
  }
  return paths;
}

/** The folders under `root`/src that hold a `.ts` file, as `src/a/b`, sorted. */
export function sourceFolders(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = `${dir}/${entry.name}`;
      const holdsModule = readdirSync(join(root, path), { withFileTypes: true })
        .some((file) => file.isFile() && file.name.endsWith(".ts"));
      if (holdsModule) found.push(path);
      walk(path);
    }
  };
  if (existsSync(join(root, "src"))) walk("src");
  return found.sort();
}

/** What is wrong with the layout table of `root`/CONTRIBUTING.md, one message each. */
export function layoutProblems(root: string): string[] {
  const file = join(root, "CONTRIBUTING.md");
  const paths = layoutTablePaths(readFileSync(file, "utf8"));
  if (paths.length === 0) return [`${file}: no table under a "## Layout" heading`];
  const named = new Set(paths);
  return [
    ...sourceFolders(root)
      .filter((folder) => !named.has(folder))
      .map((folder) => `${folder}: a folder of src/ with no row in the layout table`),
    ...paths
      .filter((path) => !existsSync(join(root, path)))
      .map((path) => `${path}: named in the layout table, but no such file or folder`),
  ];
}

if (import.meta.main) {
  const root = process.argv[2] ?? fileURLToPath(new URL("../", import.meta.url));
  const problems = layoutProblems(root);
  if (problems.length > 0) {
    console.error(
      `CONTRIBUTING.md's layout table (tools/check_layout_table.ts):\n` +
        problems.map((problem) => `  ${problem}`).join("\n"),
    );
    process.exit(1);
  }
}
