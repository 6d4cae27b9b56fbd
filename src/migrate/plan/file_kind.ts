import { isCodePath } from "../code/code_file.ts";
import { namesCallbackEvent } from "./callback_name.ts";

/**
 * Whether a folder walk keeps the file named `name` as a migration of a driver whose files end
 * in `extension` (in any case). A driver that runs code (`code`) also gets `.ts` and `.js` files,
 * but only those named as Flyway names migrations (`V3__backfill.ts`, `R__refresh.js`, the undo
 * file `U3__backfill.ts`), and, for
 * a driver that runs `callbacks`, after a Flyway event (`afterMigrate.ts`): a helper module such
 * files import (`lib/slug.ts`), a type declaration or a test stays out, as any other file does,
 * and is listed as such.
 */
export function acceptsFile(
  name: string,
  extension: string,
  code: boolean,
  callbacks = false,
): boolean {
  if (name.toLowerCase().endsWith(extension.toLowerCase())) return true;
  return code && (isCodeMigrationName(name) || (callbacks && isCodeCallbackName(name)));
}

/** Whether `name` (a file's, without folders) is that of a callback in code, in any case. */
export function isCodeCallbackName(name: string): boolean {
  return isCodePath(name) && namesCallbackEvent(name);
}

/** Whether `name` (a file's, without folders) is that of a migration in code. */
export function isCodeMigrationName(name: string): boolean {
  return isCodePath(name) && FLYWAY_FORM.test(name);
}

// `V` or `R`, then a version's first character or the `__` of a repeatable, or an undo file's
// `U` and version: readMigrationName (readUndoName) then reads (or refuses) the rest, as for any
// suffix.
const FLYWAY_FORM = /^(?:[VU][\d._]|R__)/;
