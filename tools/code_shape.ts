// Measures the shape of the code, for the notes that say what a change did to it:
//
//   deno run --allow-read --allow-write --allow-run tools/code_shape.ts [function ...]
//
// prints the longest functions under src/ and of the entry modules (the *.ts at the root), the
// count of functions over 100 lines, the span of each function named (`wire`, `createScheduler`),
// the largest file of src/, the non-null assertions (`x!`) in src/ and in src/scheduling/, the
// module-level `let`s of src/ (and those with no comment saying why), the names `mod.ts` exports
// (values and types), the classes with the most mutable fields, and the JSDoc examples that hold a
// decorator line (which an editor's hover reads as a tag). Pairs of duplicate lines are the
// `duplicates` command's. With `--json`, the figures as one JSON object instead, for
// tests/code_shape_test.ts, which holds them to their budgets.
// `npm test` (tools/test_all.sh) prints these figures once per run, after lint, and goes on
// whatever they are.
import { dirname, join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = join(dirname(fromFileUrl(import.meta.url)), "..");
const json = Deno.args.includes("--json");
const named = Deno.args.filter((arg) => arg !== "--json");
// What --json prints: the figures the budgets hold.
const shape: Record<string, unknown> = {};
// Printed as they are measured, unless --json.
const say = (line: string): void => {
  if (!json) console.log(line);
};

interface Diagnostic {
  readonly filename: string;
  readonly range: { readonly start: { readonly line: number } };
  readonly message: string;
  readonly code: string;
}

// The entry modules: the *.ts at the root, each a public entry point.
const entries: string[] = [];
for await (const entry of Deno.readDir(ROOT)) {
  if (entry.isFile && entry.name.endsWith(".ts")) entries.push(join(ROOT, entry.name));
}
entries.sort();

const folder = await Deno.makeTempDir({ prefix: "thaw-code-shape-" });
try {
  const config = join(folder, "deno.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      lint: {
        plugins: [join(ROOT, "tools/lint/measure_plugin.ts")],
        rules: { tags: [] },
      },
    }),
  );
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["lint", "--json", "--config", config, join(ROOT, "src"), ...entries],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const { diagnostics } = JSON.parse(new TextDecoder().decode(stdout)) as {
    diagnostics: Diagnostic[];
  };
  const functions = diagnostics.filter((d) => d.code === "measure/function").map((d) => {
    const [lines, name] = d.message.split(" ");
    const where = `${relative(ROOT, fromFileUrl(d.filename))}:${d.range.start.line}`;
    return { lines: Number(lines), name, where };
  }).sort((a, b) => b.lines - a.lines);
  const inSrc = functions.filter((f) => f.where.startsWith("src/"));
  const inEntries = functions.filter((f) => !f.where.startsWith("src/"));
  shape.longestFunctions = inSrc.slice(0, 5);
  say("Longest functions in src/:");
  for (const f of inSrc.slice(0, 5)) say(`  ${f.lines} lines  ${f.name}  ${f.where}`);
  say("Longest functions in the entry modules (*.ts at the root):");
  for (const f of inEntries.slice(0, 3)) say(`  ${f.lines} lines  ${f.name}  ${f.where}`);
  const long = functions.filter((f) => f.lines > 100);
  say(
    `Functions over 100 lines: ${long.length} (src/ ${
      long.filter((f) => f.where.startsWith("src/")).length
    }, entry modules ${long.filter((f) => !f.where.startsWith("src/")).length})`,
  );
  for (const name of named) {
    const found = functions.filter((f) => f.name === name);
    if (found.length === 0) say(`${name}: no such function in src/`);
    for (const f of found) say(`${name}: ${f.lines} lines (${f.where})`);
  }
  const nonNull = diagnostics.filter((d) =>
    d.code === "measure/non-null" && d.filename.includes("/src/")
  );
  const scheduling = nonNull.filter((d) => d.filename.includes("/src/scheduling/"));
  shape.nonNull = nonNull.length;
  const classes = diagnostics.filter((d) => d.code === "measure/mutable-fields").map((d) => {
    const [fields, name] = d.message.split(" ");
    const where = `${relative(ROOT, fromFileUrl(d.filename))}:${d.range.start.line}`;
    return { fields: Number(fields), name, where };
  }).filter((c) => c.where.startsWith("src/")).sort((a, b) => b.fields - a.fields);
  shape.classes = classes;
  say(
    "Classes with the most mutable fields: " +
      classes.slice(0, 3).map((c) => `${c.fields} ${c.name} (${c.where})`).join(", "),
  );
  say(
    `Non-null assertions (x!) in src/: ${nonNull.length}, in src/scheduling/: ${scheduling.length}`,
  );
} finally {
  await Deno.remove(folder, { recursive: true });
}

const docs = await new Deno.Command(Deno.execPath(), {
  args: ["doc", "--json", join(ROOT, "mod.ts")],
  stdout: "piped",
  stderr: "inherit",
}).output();
const { nodes } = JSON.parse(new TextDecoder().decode(docs.stdout)) as {
  nodes: Record<string, { symbols: { declarations: { kind: string }[] }[] }>;
};
const symbols = Object.values(nodes).flatMap((module) => module.symbols);
const values =
  symbols.filter((s) =>
    s.declarations.some((d) => d.kind === "function" || d.kind === "class" || d.kind === "variable")
  ).length;
shape.modExports = symbols.length;
say(`Names mod.ts exports: ${symbols.length} (${values} values, ${symbols.length - values} types)`);

// An example is a fenced block inside a JSDoc comment; its decorator lines start, after the
// comment's `*`, with `@` and a name.
let examples = 0;
let withDecorator = 0;
const files: string[] = [...entries];
async function walk(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await walk(path);
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
}
await walk(join(ROOT, "src"));
let largest = { lines: 0, file: "" };
const fileLines: { lines: number; file: string }[] = [];
const moduleLets: { where: string; commented: boolean }[] = [];
for (const file of files) {
  const text = await Deno.readTextFile(file);
  if (file.startsWith(join(ROOT, "src"))) {
    const lines = text.split("\n");
    const count = text.endsWith("\n") ? lines.length - 1 : lines.length;
    if (count > largest.lines) largest = { lines: count, file: relative(ROOT, file) };
    fileLines.push({ lines: count, file: relative(ROOT, file) });
    let previous: { line: number; commented: boolean } | undefined;
    lines.forEach((line, i) => {
      if (!/^(export )?let /.test(line)) return;
      // Said why on the line itself, in the comment right above it, or above the run of lets it
      // ends.
      const above = i > 0 ? lines[i - 1].trim() : "";
      const commented = line.includes("//") || above.startsWith("//") || above.endsWith("*/") ||
        (previous?.line === i - 1 && previous.commented);
      previous = { line: i, commented };
      moduleLets.push({ where: `${relative(ROOT, file)}:${i + 1}`, commented });
    });
  }
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    for (const block of comment[0].matchAll(/```[^\n]*\n([\s\S]*?)```/g)) {
      examples++;
      if (/^\s*\*?\s*@[A-Za-z]/m.test(block[1])) withDecorator++;
    }
  }
}
say(`JSDoc examples: ${examples}, with a decorator line: ${withDecorator}`);
say(`Largest file in src/: ${largest.lines} lines (${largest.file})`);
const uncommented = moduleLets.filter((l) => !l.commented);
shape.files = fileLines.sort((a, b) => b.lines - a.lines);
shape.moduleLets = moduleLets;
if (json) console.log(JSON.stringify(shape));
say(
  `Module-level lets in src/: ${moduleLets.length}, with no comment: ${uncommented.length}` +
    uncommented.map((l) => `\n  ${l.where}`).join(""),
);
