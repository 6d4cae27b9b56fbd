// Spring Boot's `diskSpace` component: loaded by the actuator only where there is a file system
// (builtin_health.ts), and reaching it through `process.getBuiltinModule`, so that no `node:`
// module is named in a worker's bundle, where this never runs.
import type { ComponentHealth } from "./health.ts";
import type { IndicatorBean } from "./health_hooks.ts";

// What it uses of `node:fs` and `node:path`, typed here: naming them would bring Node's types
// (and their globals) into every program that type-checks the actuator.
interface Statfs {
  readonly blocks: number;
  readonly bsize: number;
  readonly bavail: number;
}
interface Builtins {
  fs: { promises: { statfs(path: string): Promise<Statfs> } };
  path: { resolve(path: string): string };
}

/** What the component reports, as Spring Boot's `DiskSpaceHealthIndicator` does. */
export interface DiskSpaceDetails {
  /** The size of the file system holding `path`, in bytes. */
  readonly total: number;
  /** The bytes this process may still write there (what `df` calls available). */
  readonly free: number;
  readonly threshold: number;
  /** The folder watched, made absolute. */
  readonly path: string;
  readonly exists: boolean;
}

/**
 * The `diskSpace` component: UP while the free space of the file system holding `path` (a
 * relative path is from the working folder) is at least `threshold` bytes, DOWN below it, with
 * Spring's details. A folder that does not exist has no space: DOWN, `exists: false` (unless the
 * threshold is 0). Any other failure to read it (a folder the process may not read) is DOWN with
 * the error.
 */
export function diskSpaceIndicator(
  path: string,
  threshold: number,
): Omit<IndicatorBean, "check"> & { readonly check: () => Promise<ComponentHealth> } {
  const load = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process?.getBuiltinModule;
  if (typeof load !== "function") {
    throw new Error("diskSpace: this runtime has no process.getBuiltinModule");
  }
  const { statfs } = (load("fs") as Builtins["fs"]).promises;
  const absolute = (load("path") as Builtins["path"]).resolve(path);
  const check = async (): Promise<ComponentHealth> => {
    let total = 0;
    let free = 0;
    let exists = true;
    try {
      const stats = await statfs(absolute);
      total = stats.blocks * stats.bsize;
      free = stats.bavail * stats.bsize;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      exists = false;
    }
    const details: DiskSpaceDetails = { total, free, threshold, path: absolute, exists };
    return { status: free >= threshold ? "UP" : "DOWN", details: { ...details } };
  };
  return { name: "diskSpace", className: "DiskSpaceHealthIndicator", check, builtIn: {} };
}
