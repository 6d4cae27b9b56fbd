import type { Class } from "./class.ts";
import { recordOf } from "./class_record.ts";
import { DefinitionError } from "./errors.ts";
import { messageOf } from "./message_of.ts";
import {
  isLoadedConfig,
  type LoadedConfig,
  markScanned,
  resolveConfig,
  type ScanRecord,
} from "../config/application_config.ts";
import { ConfigError } from "../config/config_error.ts";
import type { ConfigValues } from "../config/config_values.ts";
import { readSettings } from "../config/thaw_settings.ts";

const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const NOT_SOURCE = /(?:[._](?:test|spec|bench)|\.d)\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * Imports every module under the given directories and returns the exported classes that carry a
 * Thaw stereotype (`@RestController`, `@Component`, `@Service`, `@Configuration`), for
 * `bootstrap({ components })`. Given what `loadConfig` read, scans the directories of its
 * `app.component-scan` key, relative to the file; given a configuration object, the same key's,
 * relative to `base`.
 *
 * Files are visited in byte order of their path; tests (`*_test.ts`, `*.spec.ts`, ...),
 * declaration files, dot-folders and `node_modules` are passed over. Only exported classes are
 * found. Relative directories resolve against `base` (a directory path or file URL), or the
 * working directory when none is given. This needs a file system: on an edge runtime, list the
 * classes instead (or import a generated manifest).
 *
 * @example A folder with one controller, found and wired
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { pathToFileURL } from "node:url";
 * import { bootstrap } from "@thaw/thaw";
 * import { scanComponents } from "@thaw/thaw/scan";
 *
 * const dir = await mkdtemp(join(tmpdir(), "thaw-"));
 * await mkdir(join(dir, "src"));
 * const thaw = JSON.stringify(import.meta.resolve("@thaw/thaw"));
 * // The module's lines joined, as a JSDoc comment cannot hold a line that opens with `@`.
 * const controller = [
 *   `import { GetMapping, RestController } from ${thaw};`,
 *   "@RestController()",
 *   "export class PingController {",
 *   '  @GetMapping("/ping")',
 *   '  ping() { return "pong"; }',
 *   "}",
 * ];
 * await writeFile(join(dir, "src", "ping_controller.ts"), controller.join("\n"));
 *
 * const components = await scanComponents([pathToFileURL(join(dir, "src"))]);
 * assert.deepEqual(components.map((c) => c.name), ["PingController"]);
 * const app = await bootstrap({ components });
 * const res = await app.fetch(new Request("http://localhost/ping"));
 * assert.equal(await res.text(), "pong");
 * ```
 */
export async function scanComponents(
  source: readonly (string | URL)[] | LoadedConfig | ConfigValues,
  base?: string | URL,
): Promise<Class[]> {
  let directories: readonly (string | URL)[];
  let scannedConfig: object | undefined;
  // For a loaded file, where its key is: a missing folder is a mistake in that line.
  let where: string | undefined;
  if (Array.isArray(source)) {
    directories = source;
  } else if (isLoadedConfig(source)) {
    if (base !== undefined) {
      throw new TypeError(
        "scanComponents(config, base): a loaded file's directories resolve against its own " +
          `folder (${source.dir}); give no base`,
      );
    }
    const settings = readSettings(source);
    directories = settings.get("app.component-scan");
    base = source.dir;
    scannedConfig = source;
    where = settings.where("app.component-scan");
  } else if (
    typeof source === "object" && source !== null && !(source instanceof URL)
  ) {
    // A configuration object: its `${VAR}` placeholders substituted as bootstrap substitutes
    // them, its directories resolved against `base`, else the working directory.
    directories = readSettings(resolveConfig(source as ConfigValues)).get("app.component-scan");
    scannedConfig = source;
  } else {
    throw new TypeError(
      "scanComponents takes a list of directories, what loadConfig returns or a configuration " +
        "object, got " +
        (typeof source === "string" || source instanceof URL
          ? "one directory: put it in a list"
          : String(source)),
    );
  }
  const found: Class[] = [];
  const exports = await scanExports(directories, base).catch((error) => {
    if (where === undefined || !(error instanceof DefinitionError)) throw error;
    throw new DefinitionError(`${where}: ${error.message}`, { cause: error.cause ?? error });
  });
  for (const { cls } of exports) {
    if (!found.includes(cls)) found.push(cls);
  }
  if (scannedConfig !== undefined) {
    // A copy: what the caller does to the list it gets changes nothing of what was found.
    markScanned(scannedConfig, { check: scanCheck(JSON.stringify(directories), [...found]) });
  }
  return found;
}

// Scanned with other directories than the key holds now, or its classes left out, the key would
// be as good as ignored.
function scanCheck(scanned: string, found: readonly Class[]): ScanRecord["check"] {
  return (where, directories, classes) => {
    if (scanned !== JSON.stringify(directories)) {
      throw new ConfigError(
        `${where}: the directories changed after scanComponents(config) scanned them ` +
          `(${scanned}, now ${JSON.stringify(directories)}): scan again`,
      );
    }
    const missing = found.filter((cls) => !classes.includes(cls));
    if (missing.length > 0) {
      throw new ConfigError(
        `${where}: scanComponents(config) found ${
          missing.map((cls) => cls.name).join(", ")
        }, which bootstrap was not given: pass components: await scanComponents(config)`,
      );
    }
  };
}

/** A bean class found by scanning, and where it is exported. */
export interface ScannedClass {
  /** The absolute path of the module. */
  readonly file: string;
  /** The name it is exported under. */
  readonly exportName: string;
  readonly cls: Class;
}

/** A file the scan found that could not be imported; `cause` is the runtime's error. */
export class ScanImportError extends DefinitionError {
  /** The file's path. */
  readonly file: string;

  /**
   * Creates the error.
   *
   * @param file the file's path
   * @param cause why the import failed
   */
  constructor(file: string, cause: unknown) {
    super(
      `Component scan could not import ${file}: ${messageOf(cause)}${
        typeScriptOnNode(file, cause)
          ? " (Node loads no TypeScript with decorators by itself: run it through tsx, " +
            "node --import tsx, with tsx installed)"
          : ""
      }`,
      { cause },
    );
    this.file = file;
  }
}

/**
 * Whether importing `file` failed because Node, without a loader, cannot run TypeScript: it does
 * not know the extension (Node 20), or strips types but cannot parse decorators (Node 23.6+).
 */
export function typeScriptOnNode(file: string, error: unknown): boolean {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  if (g.Deno !== undefined || g.Bun !== undefined || !/\.[mc]?tsx?$/.test(file)) return false;
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_UNKNOWN_FILE_EXTENSION" || code === "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX" ||
    error instanceof SyntaxError;
}

/** Like {@linkcode scanComponents}, but says where each class is exported (once per export). */
export async function scanExports(
  directories: readonly (string | URL)[],
  base?: string | URL,
): Promise<ScannedClass[]> {
  // Loaded only when scanning, so the library itself imports nothing that needs a file system.
  const { readdir, stat } = await import("node:fs/promises");
  const { resolve, join } = await import("node:path");
  const { fileURLToPath, pathToFileURL } = await import("node:url");
  const toPath = (p: string | URL) => typeof p === "string" ? p : fileURLToPath(p);
  const root = base === undefined ? undefined : toPath(base);

  const files: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && SOURCE.test(entry.name) && !NOT_SOURCE.test(entry.name)) {
        files.push(path);
      }
    }
  }
  for (const directory of directories) {
    const dir = root === undefined ? resolve(toPath(directory)) : resolve(root, toPath(directory));
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new DefinitionError(`Component scan: ${dir} is not a directory`);
    }
    await walk(dir);
  }
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  const found: ScannedClass[] = [];
  for (const file of new Set(files)) {
    let module: Record<string, unknown>;
    try {
      module = await import(pathToFileURL(file).href);
    } catch (error) {
      throw new ScanImportError(file, error);
    }
    for (const [exportName, value] of Object.entries(module)) {
      if (typeof value === "function" && recordOf(value as Class)?.stereotype !== undefined) {
        found.push({ file, exportName, cls: value as Class });
      }
    }
  }
  return found;
}
