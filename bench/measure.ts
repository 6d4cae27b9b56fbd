// What the CPU benchmarks share: the runtime's name for their report, the process's CPU time, and
// the quartiles of the batches they time.
import process from "node:process";

/** The runtime and its version, such as `Deno 2.9.5`. */
export function runtimeName(): string {
  const runtimes = globalThis as unknown as {
    Deno?: { version: { deno: string } };
    Bun?: { version: string };
  };
  if (runtimes.Deno !== undefined) return `Deno ${runtimes.Deno.version.deno}`;
  if (runtimes.Bun !== undefined) return `Bun ${runtimes.Bun.version}`;
  return `Node ${process.versions.node}`;
}

/** CPU time the process used so far (user and system), in ms. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The first quartile, the median and the third quartile of `xs`. */
export function quartiles(xs: readonly number[]): [number, number, number] {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return [at(0.25), at(0.5), at(0.75)];
}
