import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { sqlContentHash } from "../files/content_hash.ts";
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
  const module = await importCode(file);
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
 * What undoes a code file: its module's `down` export, imported now (only for a version `undo`
 * undoes: a dry run and every other command import nothing), or `undefined` where it exports none.
 * Throws a {@linkcode CodeLoadError} where the module cannot be imported, or `down` is no function.
 */
export async function loadDown(file: CodeFile): Promise<CodeMigration<never> | undefined> {
  const down = (await importCode(file) as { down?: unknown } | null)?.down;
  if (down === undefined) return undefined;
  if (typeof down !== "function") {
    throw new CodeLoadError(
      `its down export is a ${typeof down}, not a function: write export async function ` +
        "down(ctx) { ... }",
    );
  }
  return down as CodeMigration<never>;
}

// The module of a code file: the one given for it, or the file imported, checked unchanged.
async function importCode(file: CodeFile): Promise<unknown> {
  let module: unknown;
  if (file.code.kind === "module") module = file.code.module;
  else {
    if (file.source !== undefined) {
      // The checksum recorded must be that of the code that runs: an edit since the folder was
      // read (a deploy, a ConfigMap update) would otherwise run unseen under the old one.
      if (await sqlContentHash(new Uint8Array(await readFile(file.source))) !== file.hash) {
        throw new CodeLoadError(
          "changed since the run read the migrations folder: run again, to plan it as it is now",
        );
      }
      forget(file.source, file.hash);
    }
    try {
      module = await import(file.code.url);
    } catch (error) {
      throw new CodeLoadError(`could not be imported: ${describeLoadError(error)}`, {
        cause: error,
      });
    }
  }
  return module;
}

/**
 * Drops the module a runtime keeps for `path` when its text changed since it was last imported, so
 * that an edited file is imported anew in a long-lived process, and an unchanged one is not
 * evaluated again (its top-level code runs once per process, on every runtime). Deno and Node's
 * own loader key their cache by the URL, whose query changes with the checksum; Bun, and tsx
 * (which loads a file through the CommonJS loader), key it by the path alone and ignore the query,
 * but let it be removed from `require.cache`.
 */
function forget(path: string, hash: string): void {
  const last = imported.get(path);
  imported.set(path, hash);
  if (last === undefined || last === hash) return;
  try {
    delete createRequire(path).cache[path];
  } catch {
    // A runtime without the CommonJS cache keys by URL.
  }
}

// The checksum each file had when last imported, by path: one process's module cache, mirrored.
const imported = new Map<string, string>();

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
