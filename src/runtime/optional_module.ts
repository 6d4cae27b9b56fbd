/**
 * An optional package that is not installed: a database driver for a datasource of its kind,
 * undici for a proxy on Node, swagger-ui-dist for the docs page. Nothing was sent; the CLI exits
 * with 2 (a configuration error), `bootstrap` rejects; the message ends with the line that
 * installs what is missing.
 */
export class MissingPackageError extends Error {
  /** The packages to install, in the order of the install line. */
  readonly packages: readonly string[];
  /** `npm install <packages>`. */
  readonly install: string;
  /** The connection or datasource that needs them, where one does. */
  readonly connection?: string;

  /**
   * Creates the error.
   *
   * @param need what is missing, and who needs it
   * @param options the runtime's own error as `cause`
   */
  constructor(need: OptionalPackages, options?: ErrorOptions) {
    const install = `npm install ${need.packages.join(" ")}`;
    super(`${need.neededBy} needs ${need.what}: ${install}`, options);
    this.name = "MissingPackageError";
    this.packages = need.packages;
    this.install = install;
    if (need.connection !== undefined) this.connection = need.connection;
  }
}

/** The optional packages one import needs, and for the message who needs them and what they are. */
export interface OptionalPackages {
  /** npm package names, all of them installed by the line the error prints. */
  readonly packages: readonly string[];
  /** Who needs them: `datasource "main" (kind postgres)`. */
  readonly neededBy: string;
  /** What they are: `the pg driver`. */
  readonly what: string;
  /** The connection or datasource that needs them, for the `--json` report. */
  readonly connection?: string;
}

/**
 * Runs `load` (a function around a dynamic `import()` with a literal specifier, which Deno, JSR
 * and bundlers can see) and returns the module. When the import fails because one of
 * `need.packages` is not installed, throws {@linkcode MissingPackageError} naming the install
 * line; any other failure (a module that throws while loading, a package that is there but misses
 * one of its own dependencies) propagates unchanged.
 */
export async function importOptional<T>(
  load: () => Promise<T>,
  need: OptionalPackages,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (missingPackage(error, need.packages)) {
      throw new MissingPackageError(need, { cause: error });
    }
    throw error;
  }
}

/**
 * Whether `error` says that one of `packages` cannot be found. All three runtimes give a missing
 * module the code `ERR_MODULE_NOT_FOUND`, and quote the package in the message (its name, a
 * sub-path of it, or Deno's `npm:name@range`):
 *
 * - Node: `Cannot find package 'pg' imported from /app/node_modules/@thaw/thaw/src/...`
 * - Bun: `Cannot find package 'pg' from '/app/...'` (or `imported from`)
 * - Deno: `Could not find package 'pg' from referrer ...`, `Could not find a matching package for
 *   'npm:pg@^8' in the node_modules directory...`, `Import "pg" not a dependency...`
 *
 * A missing file inside an installed package is quoted as a path, and a dependency of the package
 * that is missing is quoted under its own name: neither is reported as the package missing.
 */
function missingPackage(error: unknown, packages: readonly string[]): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "ERR_MODULE_NOT_FOUND" || typeof message !== "string") return false;
  return packages.some((name) => {
    const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    return new RegExp(`(['"])(?:npm:)?${escaped}(?:@[^'"/]*)?(?:/[^'"]*)?\\1`).test(message);
  });
}
