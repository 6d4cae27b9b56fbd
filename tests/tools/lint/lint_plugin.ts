// Runs `deno lint` with one plugin of tools/lint alone on a tree of its own: what the plugin's
// tests ask of it.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { promisify } from "node:util";
import { tempDir } from "../../temp_dir.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DENO = join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "deno.cmd" : "deno");

/** One thing the plugin said: its rule, the file (relative to the tree) and line, the message. */
export interface Said {
  readonly code: string;
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** What `deno lint`, with tools/lint/`plugin` alone, says of a tree of `files`. */
export async function lintWith(plugin: string, files: Record<string, string>): Promise<Said[]> {
  await using root = await tempDir(`thaw-${plugin.replace(/\W/g, "-")}-`);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root.path, path)), { recursive: true });
    await writeFile(join(root.path, path), text);
  }
  const config = join(root.path, "deno.json");
  const plugins = [join(ROOT, "tools", "lint", plugin)];
  await writeFile(config, JSON.stringify({ lint: { plugins, rules: { tags: [] } } }));
  const { stdout } = await promisify(execFile)(
    DENO,
    ["lint", "--json", "--config", config, root.path],
    { cwd: root.path },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  const { diagnostics } = JSON.parse(stdout) as {
    diagnostics: {
      filename: string;
      code: string;
      message: string;
      range: { start: { line: number } };
    }[];
  };
  return diagnostics.map((d) => ({
    code: d.code,
    file: fileURLToPath(d.filename).slice(root.path.length + 1),
    line: d.range.start.line,
    message: d.message,
  }));
}
