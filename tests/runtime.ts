import process from "node:process";

/** The runtime running the tests: the suite runs unchanged on all three. */
export const RUNTIME: "deno" | "bun" | "node" = "Deno" in globalThis
  ? "deno"
  : "Bun" in globalThis
  ? "bun"
  : "node";

/**
 * The command that runs a TypeScript entry point on the runtime running the tests, as a user of
 * that runtime would: `deno run <denoFlags>`, `bun`, or `node --import tsx` (Node lowers TC39
 * decorators only through a loader or a build). `denoFlags` are the permissions the script needs.
 */
export function scriptCommand(
  file: string,
  args: readonly string[] = [],
  denoFlags: readonly string[] = ["-A"],
): [string, string[]] {
  switch (RUNTIME) {
    case "deno":
      return [process.execPath, ["run", ...denoFlags, file, ...args]];
    case "bun":
      return [process.execPath, [file, ...args]];
    case "node":
      // Resolved here, so the child finds tsx whatever its working directory.
      return [process.execPath, ["--import", import.meta.resolve("tsx"), file, ...args]];
  }
}
