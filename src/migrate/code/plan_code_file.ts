import { pathToFileURL } from "node:url";
import { sqlContentHash } from "../files/content_hash.ts";
import { decodeFileText } from "../files/file_text.ts";
import type { MigrationFile } from "../files/migration_files.ts";
import { MigrationFileError } from "../migration_error.ts";
import type { CodeFile } from "./code_file.ts";
import type { CodeMigrationModule } from "./code_context.ts";
import {
  currentRuntime,
  type RuntimeInfo,
  typeScriptRefusal,
  typeScriptSupport,
} from "./typescript_support.ts";
import { definedFields } from "../../defined_fields.ts";

/**
 * Plans a migration in code. Its checksum is that of its text by the rule SQL files follow (line
 * endings, a BOM and final line ends are no change), so a code file is as portable between
 * checkouts as a SQL one; what it imports is not in it. Nothing of it is imported here: a dry run
 * or `status` runs none of its code, top-level code included. A `.ts` file the runtime cannot
 * import is `unrunnable`, with the command that can: a run refuses it where it would run it.
 * `given` is the module an app bundled for it, run in place of the file.
 */
export async function planCodeFile(
  file: MigrationFile,
  given?: CodeMigrationModule,
  runtime: RuntimeInfo = currentRuntime(),
): Promise<CodeFile> {
  if (decodeFileText(file.bytes) === undefined) {
    throw new MigrationFileError(file.path, "is not valid UTF-8");
  }
  const hash = await sqlContentHash(file.bytes);
  let code: CodeFile["code"];
  if (given !== undefined) code = { kind: "module", module: given };
  else if (file.source === undefined) {
    throw new MigrationFileError(
      file.path,
      "was not read from a folder, and no module was given for it (the modules option)",
    );
  } else {
    const url = pathToFileURL(file.source);
    // Keyed by the checksum: a runtime caches a module by its URL, and a long-lived process
    // (a dev server, tests) must import an edited file anew.
    url.search = `thaw=${hash.slice(0, 16)}`;
    code = { kind: "file", url: url.href };
  }
  return {
    path: file.path,
    hash,
    ...(file.hash === hash ? {} : { rawHash: file.hash }),
    runOnce: true,
    ...(given === undefined && file.path.endsWith(".ts") && typeScriptSupport(runtime) === "none"
      ? { unrunnable: typeScriptRefusal(file.path, runtime) }
      : {}),
    code,
    ...definedFields({ source: file.source }),
  };
}
