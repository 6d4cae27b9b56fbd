// Fails when a module of src/ imports from a layer it must not know, so that the layers of the code
// stay what CONTRIBUTING.md says they are:
// - the container (src/context) knows nothing of HTTP: nothing of src/http or src/web;
// - src/http and the runner (src/migrate) import nothing of the controllers (src/web), so that an
//   app without controllers, and the command line, carry none of them;
// - data access (src/data) and the runner (src/migrate) do not import each other: both stand on
//   src/sql, the one SQL layer, which imports neither of them nor src/web;
// - the search connections (src/search) stand on the runner's search settings and transport
//   (src/migrate/search), which imports nothing of them;
// - work beside the request (src/tasks) imports nothing of the controllers (src/web);
// - security (src/security) reads the routes through the host src/web hands its guard
//   (guard_host.ts), not through the route table or the middleware of src/web.
// What joins layers on purpose lives above them: the entry points and the root of src/
// (src/migrate_at_start.ts joins data access and the runner) are under no rule. The search
// connections run their migrations at start through the runner's src/migrate/at_start.ts.
//
// Every import counts: `import`, `import type`, `export ... from`, a dynamic `import("./x.ts")`
// and `typeof import("./x.ts")`. A lazy import keeps a module out of a bundle until it is used,
// but the layer that names it still depends on it.
//
// Run: deno run --allow-read --allow-run tools/check_layers.ts (it asks `deno info` for the graph).

import { normalize, relative } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { denoInfo, type InfoTarget } from "./deno_info.ts";
import { checkedFiles } from "./entry_points.ts";

/** One rule: the modules under `from` import nothing under any of `notFrom` but `except`. */
export interface LayerRule {
  /** A folder of src/, `src/context`: its modules, at any depth. */
  readonly from: string;
  /** The folders whose modules `from` must not import. */
  readonly notFrom: readonly string[];
  /** Modules of those folders `from` may import all the same: the seams between the two. */
  readonly except?: readonly string[];
  /** The rule as the error says it. */
  readonly text: string;
}

const rule = (
  from: string,
  notFrom: readonly string[],
  why: string,
  except: readonly string[] = [],
): LayerRule => ({
  from,
  notFrom,
  ...(except.length === 0 ? {} : { except }),
  text: `${from} imports nothing of ${
    notFrom.length === 1
      ? notFrom[0]
      : `${notFrom.slice(0, -1).join(", ")} or ${notFrom[notFrom.length - 1]}`
  }${except.length === 0 ? "" : ` but ${except.join(", ")}`} (${why})`,
});

/** The layering rules of src/ (CONTRIBUTING.md, "Layout"). */
export const LAYER_RULES: readonly LayerRule[] = [
  rule("src/context", ["src/http", "src/web"], "the container knows nothing of HTTP"),
  rule("src/http", ["src/web"], "HTTP's types serve the controllers, not the other way"),
  rule(
    "src/migrate",
    ["src/data", "src/search", "src/web"],
    "the runner stands on src/sql and its own search driver; src/migrate_at_start.ts joins " +
      "it to data access, and the search connections call it",
  ),
  rule(
    "src/search",
    ["src/data", "src/sql", "src/web"],
    "the search connections stand on the runner's search settings, authentication and transport",
  ),
  rule(
    "src/data",
    ["src/migrate"],
    "data access stands on src/sql; src/migrate_at_start.ts joins it to the runner",
  ),
  rule("src/tasks", ["src/web"], "work beside the request knows nothing of the controllers"),
  rule(
    "src/storage",
    ["src/web", "src/http", "src/data", "src/sql"],
    "object storage stands on the platform's Request and Response, not on the controllers",
  ),
  rule(
    "src/security",
    ["src/web"],
    "the guard reads the routes through the host src/web hands it; the Principal binder and a " +
      "stream's caller are the controllers' own seams",
    [
      "src/web/guard_host.ts",
      "src/web/compile.ts",
      "src/web/error_responder.ts",
      "src/web/binder.ts",
      "src/web/argument_resolver.ts",
      "src/web/call_context.ts",
    ],
  ),
  rule(
    "src/sql",
    ["src/data", "src/migrate", "src/web"],
    "the one SQL layer that data access and the runner share",
  ),
];

/** One import that breaks a rule. */
export interface LayerViolation {
  /** The importing module, from the root: `src/context/beans.ts`. */
  readonly file: string;
  /** The line of the import in it, from 1. */
  readonly line: number;
  /** The module it imports, from the root. */
  readonly target: string;
  /** The text of the rule it breaks. */
  readonly rule: string;
  /** `file:line imports target: rule`. */
  readonly message: string;
}

const inside = (path: string, folder: string): boolean => path.startsWith(`${folder}/`);

/**
 * The imports among `files` (paths from `root`) that break one of `rules`, sorted by file and
 * line. A module Deno cannot parse is an error naming it.
 */
export function layerViolations(
  root: string,
  files: readonly string[],
  rules: readonly LayerRule[] = LAYER_RULES,
): LayerViolation[] {
  const known = new Set(files.map((file) => normalize(file)));
  const pathOf = (specifier: string): string | undefined =>
    specifier.startsWith("file:") ? relative(root, fileURLToPath(specifier)) : undefined;
  const seen = new Set<string>();
  const found = new Map<string, LayerViolation>();
  // The graph of one module holds every module it reaches: most files are read with the first.
  for (const file of [...known].sort()) {
    if (seen.has(file)) continue;
    for (const module of denoInfo(root, file)) {
      const path = pathOf(module.specifier);
      if (path === undefined || !known.has(path) || seen.has(path)) continue;
      if (module.error !== undefined) throw new Error(`${path}: ${module.error}`);
      seen.add(path);
      const applying = rules.filter((r) => inside(path, r.from));
      if (applying.length === 0) continue;
      // A dependency names its code and its types apart (`@ts-types` over an import gives it
      // both): each is an import of its own.
      const targets = (module.dependencies ?? []).flatMap((dependency) =>
        [dependency.code, dependency.type].filter((t): t is InfoTarget => t !== undefined)
      );
      for (const { specifier, span } of targets) {
        const target = pathOf(specifier);
        if (target === undefined) continue;
        const broken = applying.find((r) =>
          r.notFrom.some((folder) => inside(target, folder)) && !r.except?.includes(target)
        );
        if (broken === undefined) continue;
        const line = (span?.start.line ?? 0) + 1;
        const message = `${path}:${line} imports ${target}: ${broken.text}`;
        found.set(message, { file: path, line, target, rule: broken.text, message });
      }
    }
    if (!seen.has(file)) throw new Error(`${file}: deno info did not list it`);
  }
  return [...found.values()].sort((a, b) =>
    a.file.localeCompare(b.file) || a.line - b.line || a.target.localeCompare(b.target)
  );
}

if (import.meta.main) {
  const root = process.argv[2] ?? fileURLToPath(new URL("../", import.meta.url));
  const violations = layerViolations(root, checkedFiles(root));
  if (violations.length > 0) {
    console.error(
      `imports across layers (tools/check_layers.ts says the rules):\n` +
        violations.map(({ message }) => `  ${message}`).join("\n"),
    );
    process.exit(1);
  }
}
