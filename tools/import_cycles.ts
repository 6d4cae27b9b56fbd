// Fails when modules import each other, directly or through others: a cycle makes a module's
// exports undefined while another of the cycle loads, depending on which one is loaded first, and
// makes the layers of the code (what may use what) impossible to read off its imports. Type-only
// imports count too: they run nothing, but the dependency they state is the same.
//
// A dynamic `import("./x.ts")` does not count: the module it names loads later, when the call runs,
// so it closes no cycle at load time, and loading a part only when it is used is how the optional
// parts stay out of an edge worker's bundle. `typeof import("./x.ts")` in a type does count, as a
// type-only import does.
//
// Checked: every module under src/ and the root entry points, with their imports among themselves
// (`import`, `import type`, `export ... from`, `export type ... from`, `typeof import("./x.ts")`);
// a package (`hono`, `node:fs`) is never part of a cycle here. Each cycle is printed as a chain of
// files, one per group of modules that reach each other.
//
// Run: deno run --allow-read --allow-run tools/import_cycles.ts (it asks `deno info` for the graph).

import { normalize, relative } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { denoInfo } from "./deno_info.ts";
import { checkedFiles } from "./entry_points.ts";

/**
 * The modules of `files` (paths from `root`) each one imports statically, `import type` and
 * `typeof import("./x.ts")` included; a dynamic `import()` and modules outside `files` left out.
 * A module Deno cannot parse is an error naming it.
 */
export function moduleImports(root: string, files: readonly string[]): Map<string, string[]> {
  const known = new Set(files.map((file) => normalize(file)));
  const pathOf = (specifier: string): string | undefined =>
    specifier.startsWith("file:") ? relative(root, fileURLToPath(specifier)) : undefined;
  const edges = new Map<string, string[]>();
  // The graph of one module holds every module it reaches: most files are read with the first.
  for (const file of [...known].sort()) {
    if (edges.has(file)) continue;
    for (const module of denoInfo(root, file)) {
      const path = pathOf(module.specifier);
      if (path === undefined || !known.has(path) || edges.has(path)) continue;
      if (module.error !== undefined) throw new Error(`${path}: ${module.error}`);
      // A dependency names its code and its types apart (`@ts-types` over an import gives it
      // both): each is an edge, but the code of a dynamic import().
      const targets = (module.dependencies ?? []).flatMap((dependency) =>
        [dependency.type, dependency.isDynamic ? undefined : dependency.code].flatMap((target) => {
          const path = target && pathOf(target.specifier);
          return path !== undefined && known.has(path) ? [path] : [];
        })
      );
      edges.set(path, [...new Set(targets)].sort());
    }
    if (!edges.has(file)) throw new Error(`${file}: deno info did not list it`);
  }
  return edges;
}

/** One group of modules that reach each other through their imports. */
export interface Cycle {
  /** A shortest chain through the group's first module, back to it: `["a.ts", "b.ts", "a.ts"]`. */
  readonly chain: readonly string[];
  /** The group's modules the chain does not pass through, sorted. */
  readonly others: readonly string[];
}

/**
 * The import cycles among `files` (paths from `root`), one per group of modules that reach each
 * other. An import of a module outside `files` is left out.
 */
export function importCycles(root: string, files: readonly string[]): Cycle[] {
  const edges = moduleImports(root, files);
  return stronglyConnected(edges)
    .filter((group) => group.length > 1 || edges.get(group[0])!.includes(group[0]))
    .map((group) => {
      const chain = shortestCycle(group.sort()[0], new Set(group), edges);
      return { chain, others: group.filter((module) => !chain.includes(module)) };
    })
    .sort((a, b) => a.chain[0].localeCompare(b.chain[0]));
}

// Tarjan's algorithm, iterative: a chain of imports can be deeper than the call stack is.
function stronglyConnected(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  for (const start of [...edges.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const children = edges.get(frame.node)!;
      if (frame.child < children.length) {
        const child = children[frame.child++];
        if (!index.has(child)) {
          index.set(child, next);
          low.set(child, next++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          group.push(member);
        } while (member !== frame.node);
        groups.push(group);
      }
    }
  }
  return groups;
}

// Breadth first inside the group, so the chain printed is one of the shortest.
function shortestCycle(
  start: string,
  group: ReadonlySet<string>,
  edges: ReadonlyMap<string, readonly string[]>,
): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of edges.get(node)!) {
      if (!group.has(child)) continue;
      if (child === start) {
        const chain: string[] = [];
        for (let at = node; at !== start; at = cameFrom.get(at)!) chain.unshift(at);
        return [start, ...chain, start];
      }
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  throw new Error(`${start} is in a cycle but reaches none`);
}

if (import.meta.main) {
  const root = process.argv[2] ?? fileURLToPath(new URL("../", import.meta.url));
  const cycles = importCycles(root, checkedFiles(root));
  if (cycles.length > 0) {
    console.error(
      `import cycles (tools/import_cycles.ts says why none is allowed):\n` +
        cycles.map(({ chain, others }) =>
          `  ${chain.join(" -> ")}` +
          (others.length > 0 ? `\n    (the same knot: ${others.join(", ")})` : "")
        ).join("\n"),
    );
    process.exit(1);
  }
}
