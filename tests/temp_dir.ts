import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";

/** A folder of the system's temp folder, removed with all it holds when its block ends. */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
}

/**
 * A new empty folder named `prefix` and random characters; `await using dir = await tempDir()`
 * removes it when the block ends, however it ends.
 *
 * Every runtime of the suite has `Symbol.asyncDispose` (Deno 2, Bun, Node 20.4 and later), and tsx
 * lowers `await using` for Node to a helper that reads that same symbol: no polyfill is needed.
 */
export async function tempDir(prefix = "thaw-"): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }),
  };
}

/**
 * For folders that outlive a block (a helper returns one, a `before` hook makes it): a maker of
 * folders, each removed after the suite (or file) that called `suiteTempDirs` is done.
 */
export function suiteTempDirs(): (prefix?: string) => Promise<string> {
  const made: TempDir[] = [];
  after(() => Promise.all(made.map((dir) => dir[Symbol.asyncDispose]())));
  return async (prefix) => {
    const dir = await tempDir(prefix);
    made.push(dir);
    return dir.path;
  };
}
