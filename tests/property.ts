import process from "node:process";
import type { Parameters } from "fast-check";

/**
 * Options for every property of the suite: a bounded number of runs, and a seed that can be given
 * back. fast-check prints the seed and the shrunk counterexample when a property fails; run the
 * suite again with `FC_SEED=<seed>` (and `FC_RUNS` for more or fewer runs) to replay it.
 */
export function propertyOptions<T>(runs = 100): Parameters<T> {
  const seed = process.env.FC_SEED;
  const scale = process.env.FC_RUNS;
  return {
    numRuns: scale === undefined ? runs : Number(scale),
    ...(seed === undefined ? {} : { seed: Number(seed) }),
    endOnFailure: false,
  };
}
