/**
 * Whether HTTP Basic's answer tells a wrong user from a wrong password by its time, on the runtime
 * that runs this file:
 *
 *   deno run -A bench/basic_timing.ts [--tries 40] [--iterations 100000]
 *   bun bench/basic_timing.ts; node --import tsx bench/basic_timing.ts
 *
 * A `BasicAuthenticator` over an in-memory `UserDetailsService` of one user whose hash has
 * `iterations` (the dummy hash the same). Tries alternate (A B, then B A): a wrong password for the
 * user, and a user that does not exist. Each is timed (wall, `performance.now()`) around
 * `authenticate`; printed: the median and the middle half of each, and the ratio of the medians
 * (1.00: the same time). Measured, not asserted: no test depends on it.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { BasicAuthenticator } from "../src/security/basic_authenticator.ts";
import { hashPassword } from "../src/security/password_hash.ts";

const { values } = parseArgs({
  options: {
    tries: { type: "string", default: "40" },
    iterations: { type: "string", default: "100000" },
  },
});
const TRIES = Number(values.tries);
const ITERATIONS = Number(values.iterations);

const runtime = "Deno" in globalThis
  ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node ${(globalThis as unknown as { process: { version: string } }).process.version}`;

const password = await hashPassword("the right password", { iterations: ITERATIONS });
const basic = new BasicAuthenticator({
  loadUserByUsername: (name) =>
    Promise.resolve(name === "ada" ? { username: "ada", password, authorities: [] } : undefined),
}, { iterations: ITERATIONS });
const wrongPassword = `Basic ${btoa("ada:a wrong password")}`;
const wrongUser = `Basic ${btoa("nobody:a wrong password")}`;

async function timed(header: string, expected: string): Promise<number> {
  const start = performance.now();
  const result = await basic.authenticate(header);
  const took = performance.now() - start;
  if (result.kind !== "refused" || result.reason !== expected) throw new Error(`${expected}?`);
  return took;
}

// Warm-up: the first derivations pay for compiling and for Web Crypto's thread pool.
for (let i = 0; i < 3; i++) {
  await timed(wrongPassword, "wrong-password");
  await timed(wrongUser, "unknown-user");
}
const times = { password: [] as number[], user: [] as number[] };
for (let i = 0; i < TRIES; i++) {
  if (i % 2 === 0) {
    times.password.push(await timed(wrongPassword, "wrong-password"));
    times.user.push(await timed(wrongUser, "unknown-user"));
  } else {
    times.user.push(await timed(wrongUser, "unknown-user"));
    times.password.push(await timed(wrongPassword, "wrong-password"));
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))];
const summary = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    text: `${quantile(sorted, 0.5).toFixed(2)} ms [${quantile(sorted, 0.25).toFixed(2)}, ${
      quantile(sorted, 0.75).toFixed(2)
    }]`,
  };
};
const p = summary(times.password);
const u = summary(times.user);
console.log(`${runtime}, PBKDF2-HMAC-SHA256 x ${ITERATIONS}, ${TRIES} tries each`);
console.log(`  wrong password: ${p.text}`);
console.log(`  wrong user:     ${u.text}`);
console.log(`  wrong user / wrong password (medians): ${(u.median / p.median).toFixed(3)}`);
