import { createRequire } from "node:module";
import type { CodeFile } from "./code_file.ts";
import type { CodeMigration } from "./code_context.ts";

/**
 * A code file could not become a function to run: its import failed (a syntax error, a module it
 * imports is missing, a permission refused), or its default export is not a function. The run
 * fails on it as on a failed file, before any of it ran.
 */
export class CodeLoadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CodeLoadError";
  }
}

/**
 * The function a code file runs: its module's default export, imported now (not when planned, so
 * that a dry run runs none of its top-level code) or taken from the module given for it.
 */
export async function loadCode(file: CodeFile): Promise<CodeMigration<never>> {
  let module: unknown;
  if (file.code.kind === "module") module = file.code.module;
  else {
    if (file.source !== undefined) forget(file.source);
    try {
      module = await import(file.code.url);
    } catch (error) {
      throw new CodeLoadError(`could not be imported: ${describeLoadError(error)}`, {
        cause: error,
      });
    }
  }
  const run = (module as { default?: unknown } | null)?.default;
  if (typeof run !== "function") {
    throw new CodeLoadError(
      `its default export is ${run === undefined ? "missing" : `a ${typeof run}`}, not a ` +
        "function: write export default async (ctx) => { ... }",
    );
  }
  return run as CodeMigration<never>;
}

/**
 * Drops the module a runtime keeps for `path`, so that an edited file is imported anew in a
 * long-lived process. Deno and Node's own loader key their cache by the URL, whose query changes
 * with the checksum; Bun, and tsx (which loads a file through the CommonJS loader), key it by the
 * path alone and ignore the query, but let it be removed from `require.cache`.
 */
function forget(path: string): void {
  try {
    delete createRequire(path).cache[path];
  } catch {
    // A runtime without the CommonJS cache keys by URL.
  }
}

// What a failed import says, with what to do where the runtime's words do not say it.
function describeLoadError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_UNKNOWN_FILE_EXTENSION") {
    return `${text} (this Node cannot import TypeScript: use Node 22.18 or later, run the ` +
      "runner through tsx, or write the migration in JavaScript)";
  }
  if (error instanceof Error && /NotCapable|PermissionDenied|Requires \w+ access/.test(text)) {
    return `${text} (Deno: the runner needs read access to the file and what it imports)`;
  }
  return text;
}
