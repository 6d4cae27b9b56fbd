import type { PlannedFile } from "../plan/planned_file.ts";
import type { CodeMigrationModule } from "./code_context.ts";

/** The suffixes of migrations written in code. */
export const CODE_EXTENSIONS: readonly string[] = [".ts", ".js"];

/**
 * Whether the file at `path` is a migration in code: it ends in `.ts` or `.js` (lowercase, as
 * runtimes read them), and is no type declaration (`.d.ts`), which has nothing to run.
 */
export function isCodePath(path: string): boolean {
  const name = path.slice(path.lastIndexOf("/") + 1);
  return CODE_EXTENSIONS.some((suffix) => name.endsWith(suffix)) && !name.endsWith(".d.ts");
}

/**
 * Where a code file's function comes from: the file itself, imported when it runs (`url` holds a
 * query that changes with its checksum, so an edited file is imported anew in a long-lived
 * process), or a module the app bundled and passed to `migrate()`.
 */
export type CodeSource =
  | { readonly kind: "file"; readonly url: string }
  | { readonly kind: "module"; readonly module: CodeMigrationModule };

/** A planned migration in code: checksummed on its text, run by calling its default export. */
export interface CodeFile extends PlannedFile {
  readonly code: CodeSource;
  /** Its absolute path, where it was read from disk: errors are located in it by this path. */
  readonly source?: string;
}

/** Whether a planned file is a migration in code. */
export function isCodeFile(file: PlannedFile): file is CodeFile {
  return "code" in file && (file as { code?: unknown }).code !== undefined;
}
