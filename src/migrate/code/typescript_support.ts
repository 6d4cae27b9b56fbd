import process from "node:process";

/** What decides whether this process can import a `.ts` migration file, as read from it. */
export interface RuntimeInfo {
  /** The runtime: Deno and Bun read their own globals first, as both also set `versions.node`. */
  readonly name: "deno" | "bun" | "node" | "other";
  /** Its version, without a `v` (`20.20.2`, `2.9.5`); `""` when unknown. */
  readonly version: string;
  /** Node's `process.features.typescript`: `"strip"`, `"transform"`, or absent or false. */
  readonly typescriptFeature?: string | boolean;
  /** The flags given to the runtime itself (`process.execArgv`). */
  readonly execArgv: readonly string[];
  /** `NODE_OPTIONS`, `""` when unset or unreadable. */
  readonly nodeOptions: string;
  /** The runtime's executable (`process.execPath`). */
  readonly execPath: string;
  /** `process.argv`: the executable, the script, its arguments. */
  readonly argv: readonly string[];
  /** The working directory, to show the script's path as the user typed it. */
  readonly cwd: string;
}

/**
 * How the runtime described by `rt` imports a `.ts` file: `native` (Deno, Bun, Node with type
 * stripping on), `loader` (Node with a module hook such as `--import tsx`, which may handle it:
 * whether it does shows only at the import), or `none` (Node 20, or 22 without its flag), where a
 * `.ts` migration is refused before anything is sent.
 */
export function typeScriptSupport(rt: RuntimeInfo): "native" | "loader" | "none" {
  switch (rt.name) {
    case "deno":
    case "bun":
      return "native";
    case "other":
      return "none";
  }
  if (rt.typescriptFeature) return "native";
  const flags = nodeFlags(rt);
  // 22.6 to 22.9 strip types with the flag but have no `features.typescript` to say so.
  const [major, minor] = versionParts(rt.version);
  if (major === 22 && minor >= 6 && flags.includes(STRIP_TYPES)) return "native";
  if (flags.some(isLoaderFlag)) return "loader";
  return "none";
}

/**
 * Why the `.ts` file at `path` cannot be imported by the runtime described by `rt`, with the
 * command that would import it: the user's own command line (`rt.execPath`, `rt.execArgv`,
 * `rt.argv` after the executable), shell-quoted, the script relative to the working directory,
 * with `--experimental-strip-types` added on Node 22.6 to 22.17 and 23.0 to 23.5, or run through
 * tsx on older Node.
 */
export function typeScriptRefusal(path: string, rt: RuntimeInfo): string {
  const javascript = path.replace(/\.([cm]?)ts$/, ".$1js");
  if (rt.name !== "node") {
    return `${rt.name} cannot import TypeScript: write it as ${javascript}`;
  }
  const [major, minor] = versionParts(rt.version);
  const rest = [...rt.execArgv, ...rt.argv.slice(1).map((arg) => relativeTo(rt.cwd, arg))];
  if ((major === 22 && minor >= 6 && minor <= 17) || (major === 23 && minor <= 5)) {
    return `Node ${rt.version} strips TypeScript types only with a flag: run ` +
      command([executable(rt.execPath), STRIP_TYPES, ...rest]);
  }
  if (major < 22 || (major === 22 && minor < 6)) {
    return `Node ${rt.version} cannot import TypeScript: run ` +
      `${
        command(["npx", "tsx", ...rest])
      }, or use Node 22.18 or later, or write it as ${javascript}`;
  }
  // A later Node strips types by default: this one was told not to, or lacks the build for it.
  if (!nodeFlags(rt).includes(NO_STRIP_TYPES)) {
    return `Node ${rt.version} cannot import TypeScript here: write it as ${javascript}`;
  }
  const again = command([executable(rt.execPath), ...rest.filter((arg) => arg !== NO_STRIP_TYPES)]);
  const options = rt.nodeOptions.includes(NO_STRIP_TYPES) ? `, with NODE_OPTIONS without it` : "";
  return `Node ${rt.version} was started with ${NO_STRIP_TYPES}: run ${again}${options}, ` +
    `or write it as ${javascript}`;
}

/**
 * The runtime running this code. Reads only what every runtime gives without a permission
 * (`NODE_OPTIONS` needs `--allow-env` on Deno, so it is read on Node alone), and never throws.
 */
export function currentRuntime(): RuntimeInfo {
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
  const bun = (globalThis as { Bun?: { version?: string } }).Bun;
  const node = attempt(() => process.versions?.node, undefined);
  const name = deno !== undefined ? "deno" : bun !== undefined ? "bun" : node ? "node" : "other";
  const version = name === "deno"
    ? deno?.version?.deno
    : name === "bun"
    ? bun?.version
    : name === "node"
    ? node
    : undefined;
  const feature = attempt(
    () => (process as { features?: { typescript?: unknown } }).features?.typescript,
    undefined,
  );
  const execArgv = attempt(() => process.execArgv, []);
  const argv = attempt(() => process.argv, []);
  return {
    name,
    version: typeof version === "string" ? version : "",
    ...(typeof feature === "string" || typeof feature === "boolean"
      ? { typescriptFeature: feature }
      : {}),
    execArgv: Array.isArray(execArgv) ? [...execArgv] : [],
    nodeOptions: name === "node" ? attempt(() => process.env.NODE_OPTIONS ?? "", "") : "",
    execPath: attempt(() => process.execPath ?? "", ""),
    argv: Array.isArray(argv) ? [...argv] : [],
    cwd: attempt(() => process.cwd(), ""),
  };
}

const STRIP_TYPES = "--experimental-strip-types";
const NO_STRIP_TYPES = "--no-experimental-strip-types";

/** Flags that load code before the script: a module hook that may import `.ts` on its own. */
const LOADER_FLAGS = ["--import", "--loader", "--experimental-loader", "--require", "-r"];

function isLoaderFlag(flag: string): boolean {
  return LOADER_FLAGS.some((name) => flag === name || flag.startsWith(`${name}=`));
}

/** The flags of `execArgv`, then those of `NODE_OPTIONS`, as Node reads them both. */
function nodeFlags(rt: RuntimeInfo): string[] {
  return [...rt.execArgv, ...splitOptions(rt.nodeOptions)];
}

/** `NODE_OPTIONS` split as Node splits it: on spaces, outside double quotes. */
function splitOptions(options: string): string[] {
  const words: string[] = [];
  for (const match of options.matchAll(/(?:"(?:[^"\\]|\\.)*"|[^\s"])+/g)) {
    words.push(match[0].replace(/"((?:[^"\\]|\\.)*)"/g, (_, inner: string) => inner));
  }
  return words;
}

/** `major.minor` of `version` (`v22.6.0` or `22.6.0`); 0 where a part is missing. */
function versionParts(version: string): [number, number] {
  const match = /^v?(\d+)(?:\.(\d+))?/.exec(version);
  return match === null ? [0, 0] : [Number(match[1]), Number(match[2] ?? 0)];
}

/** The executable as the user would type it: `node` when it is one, else its path. */
function executable(execPath: string): string {
  const name = execPath.slice(execPath.lastIndexOf("/") + 1);
  return name === "node" || execPath === "" ? "node" : execPath;
}

/** `arg` relative to `cwd` when it is a path inside it; else as it is. */
function relativeTo(cwd: string, arg: string): string {
  if (cwd === "" || !arg.startsWith("/")) return arg;
  if (arg === cwd) return ".";
  const base = cwd.endsWith("/") ? cwd : `${cwd}/`;
  return arg.startsWith(base) ? arg.slice(base.length) : arg;
}

/** `words` as one shell command line, each quoted only when the shell would split or expand it. */
function command(words: readonly string[]): string {
  return words.map(quote).join(" ");
}

function quote(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
