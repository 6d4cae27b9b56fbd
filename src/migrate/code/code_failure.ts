import type { Mask } from "../../config/secrets_mask.ts";
import { MigrationFailure } from "../migration_error.ts";
import type { CodeFile } from "./code_file.ts";
import { CodeLoadError } from "./load_code.ts";
import { lineIn } from "./stack_line.ts";
import { withoutColours } from "./terminal_colours.ts";
import { definedFields } from "../../defined_fields.ts";

/** Where a code file failed, and what the message adds. */
export interface CodeFailureSite {
  readonly connection: string;
  /** What the report may show: placeholder values written back as their names. */
  readonly mask: Mask;
  /** The event, where the file is a callback. */
  readonly callback?: string;
  /** What may have been left, said after the error. */
  readonly after?: string;
  /** The run was interrupted: the file stopped for it, not for a fault of its own. */
  readonly interrupted?: boolean;
}

/**
 * The failure of a code file: its own error's message (masked: it may quote a placeholder's
 * value), the line of the file where it was thrown or where the failing call was made, and the
 * database's code where a query failed. Of kind `interrupted` where `site` says the run was: the
 * file stopped because it was told to (`ctx.signal`), or was abandoned.
 */
export function codeFailure(
  file: CodeFile,
  error: unknown,
  site: CodeFailureSite,
): MigrationFailure {
  const source = file.source;
  // A failed import carries the runtime's error (a SyntaxError's location) as its cause.
  const line = source === undefined
    ? undefined
    : safely(() =>
      lineIn(error, source) ?? lineIn((error as { cause?: unknown } | null)?.cause, source)
    );
  const code = safely(() => (error as { code?: unknown } | null)?.code);
  return new MigrationFailure(
    {
      connection: site.connection,
      file: file.path,
      ...definedFields({ callback: site.callback, line }),
      ...(typeof code === "string" && code !== "" ? { code } : {}),
      reason: site.mask(plain(`${describe(error)}${site.after ?? ""}`)),
    },
    { cause: error },
    site.interrupted ? "interrupted" : "failure",
  );
}

// The query a code file is imported with (`?thaw=<checksum>`) is the runner's own: the file's path
// says where.
const IMPORT_QUERY = /\?thaw=[0-9a-f]{16}\b/g;

/** `text` without terminal colours, and with each URL of a code file as the file's own. */
function plain(text: string): string {
  return withoutColours(text).replace(IMPORT_QUERY, "");
}

// `Error: x` says nothing an `Error` does not; any other name (TypeError, a user's own) does.
function describe(error: unknown): string {
  if (!(error instanceof Error)) return `threw ${text(error)}`;
  if (error instanceof CodeLoadError) return error.message;
  const name = text(safely(() => error.name)), message = text(safely(() => error.message));
  return name === "Error" ? message : `${name}: ${message}`;
}

// What a getter of a thrown object gives, or nothing where it throws.
function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

// A migration may throw anything: a value with no string of its own (a null prototype, a
// `toString` that throws) must not turn its failure into a crash of the runner.
function text(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
