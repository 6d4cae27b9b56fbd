import { fileURLToPath, pathToFileURL } from "node:url";

// Two checks of the public surface's documentation:
//
// 1. `deno doc --lint`, failing on every finding but one: Deno reports a public type that refers to
//    an npm package's exported type as "private" (denoland/deno#27364; the upstream fix covers
//    remote modules, not npm packages read from node_modules). `Application.hono` is Hono's own
//    app type on purpose, as middleware is Hono's own `MiddlewareHandler`, `Context` and `Next`,
//    and a socket's handlers Hono's own `WSEvents`, so that Hono's middleware and socket handlers
//    fit as they are, a search connection's bean is the OpenSearch package's own `Client`, and
//    `AccessDeniedError` is Hono's `HTTPException`, whose challenge the error path keeps:
//    those findings are allowed, by their exact messages.
// 2. Every example `deno test --doc` runs asserts with `node:assert/strict`: an example that states
//    its result in a comment passes whatever the code does, so a wrong one would go unseen. Read
//    in the entry files given and in every module under src/.

const ALLOWED = [
  `public type 'Application["hono"]' references private type 'Hono'`,
  `public type 'Middleware["handle"]' references private type 'Context'`,
  `public type 'Middleware["handle"]' references private type 'Next'`,
  `public type 'MiddlewareItem' references private type 'MiddlewareHandler'`,
  `public type 'WebSocketHandlers' references private type 'WSEvents'`,
  `public type 'SearchClient' references private type 'Client'`,
  `public type 'AccessDeniedError' references private type 'HTTPException'`,
];

// The languages `deno test --doc` runs; a block that names none takes the module's (TypeScript).
const RUNNABLE = new Set([
  "",
  "js",
  "javascript",
  "mjs",
  "cjs",
  "jsx",
  "ts",
  "typescript",
  "mts",
  "cts",
  "tsx",
]);

const ROOT = new URL("..", import.meta.url);

const entries = Deno.args.length > 0 ? Deno.args : ["mod.ts"];
const docLintOk = await docLint(entries);
const examplesOk = await examplesAssert(entries);
if (!docLintOk || !examplesOk) Deno.exit(1);

async function docLint(files: string[]): Promise<boolean> {
  const { stderr, success } = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...files],
    stdout: "null",
    stderr: "piped",
  }).output();
  // deno-lint-ignore no-control-regex
  const text = new TextDecoder().decode(stderr).replace(/\x1b\[[0-9;]*m/g, "");
  const findings = text.split(/\n(?=error)/).filter((block) => block.startsWith("error["));
  const real = findings.filter((block) => !ALLOWED.some((allowed) => block.includes(allowed)));
  if (real.length > 0 || (!success && findings.length === 0)) {
    console.error(real.length > 0 ? real.join("\n") : text);
    return false;
  }
  console.log(
    `deno doc --lint: clean (${findings.length} allowed finding(s): see tools/doc_lint.ts)`,
  );
  return true;
}

async function examplesAssert(files: string[]): Promise<boolean> {
  const paths = new Set(files.map((file) => fromRoot(pathToFileURL(file))));
  for await (const path of modulesUnder(new URL("src/", ROOT))) paths.add(fromRoot(path));
  let examples = 0;
  const offenders: string[] = [];
  for (const path of [...paths].sort()) {
    for (const example of runnableExamples(await Deno.readTextFile(new URL(path, ROOT)))) {
      examples++;
      if (asserts(example.code)) continue;
      offenders.push(`${path}:${example.line}`);
    }
  }
  if (offenders.length > 0) {
    console.error(
      `Examples that assert nothing: import assert from "node:assert/strict" and assert what ` +
        `the example shows, or mark the block \`ts ignore\`:\n` +
        offenders.map((where) => `  ${where}`).join("\n"),
    );
    return false;
  }
  console.log(`doc examples: all ${examples} assert what they show`);
  return true;
}

// A path as the report writes it: from the repository's root.
function fromRoot(url: URL): string {
  return url.href.startsWith(ROOT.href)
    ? decodeURIComponent(url.href.slice(ROOT.href.length))
    : fileURLToPath(url);
}

async function* modulesUnder(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) yield* modulesUnder(new URL(`${entry.name}/`, dir));
    else if (entry.isFile && /\.m?tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      yield new URL(entry.name, dir);
    }
  }
}

/** The code blocks of a module's JSDoc comments that `deno test --doc` runs, with their lines. */
function runnableExamples(source: string): { line: number; code: string }[] {
  const lines = source.split("\n");
  const examples: { line: number; code: string }[] = [];
  let inComment = false;
  let block: { line: number; code: string[]; runs: boolean } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!inComment) {
      // deno fmt puts a JSDoc comment's opening on a line of its own.
      inComment = /^\s*\/\*\*/.test(line) && !line.includes("*/");
      continue;
    }
    if (line.includes("*/")) {
      inComment = false;
      block = undefined;
      continue;
    }
    const text = line.replace(/^\s*\* ?/, "");
    const fence = text.match(/^\s*```\s*(.*)$/);
    if (fence === null) {
      block?.code.push(text);
    } else if (block === undefined) {
      const [language = "", ...attributes] = fence[1].trim().split(/\s+/);
      block = {
        line: i + 1,
        code: [],
        runs: RUNNABLE.has(language) && !attributes.includes("ignore"),
      };
    } else {
      if (block.runs) examples.push({ line: block.line, code: block.code.join("\n") });
      block = undefined;
    }
  }
  return examples;
}

/** Whether the code imports `node:assert/strict` and calls what it imported. */
function asserts(code: string): boolean {
  const imports = /import\s+([^;]*?)\s+from\s+["']node:assert\/strict["']/g;
  const names: string[] = [];
  for (const [, clause] of code.matchAll(imports)) {
    // `assert`, `* as assert`, `{ equal, strict as assert }`, or a default and named ones.
    const named = clause.match(/\{([^}]*)\}/)?.[1].split(",") ?? [];
    const unnamed = clause.replace(/\{[^}]*\}/, "").replace(/\*\s+as\s+/, "").split(",");
    for (const spec of [...named, unnamed[0]]) {
      const name = spec.trim().split(/\s+as\s+/).pop() ?? "";
      if (/^[A-Za-z_$][\w$]*$/.test(name)) names.push(name);
    }
  }
  // An assertion that is commented out asserts nothing.
  const body = code.replace(imports, "").replace(/^\s*\/\/.*$/gm, "");
  return names.some((name) =>
    new RegExp(`(?<![\\w$.])${name.replaceAll("$", "\\$")}\\s*(?:\\.\\s*\\w+\\s*)?\\(`).test(body)
  );
}
