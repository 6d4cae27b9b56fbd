/**
 * What Thaw adds to a request in the app itself, without sockets, on the runtime that runs this
 * file (`npm run bench:in-process` runs it on Deno, Bun and Node 26):
 *
 *   deno run -A bench/http/in_process.ts [--batches 40] [--batch 20000]
 *   bun bench/http/in_process.ts …        node --import tsx bench/http/in_process.ts …
 *
 * On Deno and Bun, Thaw and its baselines are served by the same call (`Deno.serve`, `Bun.serve`
 * with the app's `fetch`), so the only CPU one spends per request that the other does not is in
 * `app.fetch`. Over sockets that difference is a few µs inside 25-60 µs of server work, under a
 * noise of ±20% per slice on this machine; here it is measured alone: batches of `batch`
 * requests through `fetch`, Thaw's and the baseline's in turn (A B, then B A), CPU time from
 * `process.cpuUsage()`, and per pair the difference in µs per request. Reported: its median with
 * the range of the middle half, and the baseline's own µs per request. Divided by the server's
 * CPU per request over sockets (`paired.ts`), the difference gives Thaw's ratio there.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { fetch as checked } from "./checked_app.ts";
import { closing, InFlight } from "../../src/runtime/shutdown.ts";
import { unboundedBodyLeft } from "../../src/runtime/unread_body.ts";
import { fetch as hono } from "./hono_app.ts";
import { app as thaw } from "./thaw_app.ts";
import { getRequest, postRequest } from "./users.ts";

type Fetch = (request: Request) => Response | Promise<Response>;

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "40" },
    batch: { type: "string", default: "20000" },
  },
});
const batches = Number(values.batches);
const batch = Number(values.batch);
for (const [name, n] of [["batches", batches], ["batch", batch]] as const) {
  if (!Number.isInteger(n) || n < 2) {
    console.error(`in_process.ts: --${name} must be a whole number of at least 2`);
    process.exit(2);
  }
}

const requests = { "GET /users/{id}": getRequest, "POST /users": postRequest };
type Route = keyof typeof requests;

const thawFetch: Fetch = (request) => thaw.fetch(request);
// What `listen(app)` runs around `app.fetch` on Deno and Bun (src/runtime/serve.ts): every request
// tracked for a graceful shutdown, and on Bun each answer checked for a body left unread. The
// `GET` baseline is served by `Deno.serve`/`Bun.serve` directly, so over sockets Thaw pays both
// comparisons below; the `POST` baseline is served through the same `serve()`.
const isBun = "Bun" in globalThis;
const listened: Fetch = new InFlight().track(
  thawFetch,
  isBun
    ? (request, response) => unboundedBodyLeft(request) ? closing(response) : response
    : undefined,
);
const comparisons: [Route, string, Fetch, string, Fetch][] = [
  ["GET /users/{id}", "Thaw's app.fetch", thawFetch, "Hono's", hono],
  ["GET /users/{id}", "listen()'s wrapping of it", listened, "app.fetch alone", thawFetch],
  ["POST /users", "Thaw's app.fetch", thawFetch, "Hono + Thaw's body checks's", checked],
];

/** CPU µs per request of `n` requests, each answered and its body read, one after the other. */
async function cpuPerRequest(fetch: Fetch, make: () => Request, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const response = await fetch(make());
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
    await response.arrayBuffer();
  }
  const { user, system } = process.cpuUsage(before);
  return (user + system) / n;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.ceil(at)] - s[lo]) * (at - lo);
}

const runtime = "Deno" in globalThis
  ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node ${process.versions.node}`;

for (const [route, name, measured, baselineName, baseline] of comparisons) {
  const make = requests[route];
  // Warm-up: both through the optimizing compiler before anything counts.
  for (let i = 0; i < 3; i++) {
    await cpuPerRequest(measured, make, batch);
    await cpuPerRequest(baseline, make, batch);
  }
  const differences: number[] = [];
  const base: number[] = [];
  for (let pair = 0; pair < batches; pair++) {
    const measuredFirst = pair % 2 === 0;
    const first = await cpuPerRequest(measuredFirst ? measured : baseline, make, batch);
    const second = await cpuPerRequest(measuredFirst ? baseline : measured, make, batch);
    const [m, b] = measuredFirst ? [first, second] : [second, first];
    differences.push(m - b);
    base.push(b);
  }
  console.log(
    `${runtime} ${route}: ${name} costs ${quantile(differences, 0.5).toFixed(2)} µs per request ` +
      `more than ${baselineName} (middle half ${quantile(differences, 0.25).toFixed(2)} to ` +
      `${quantile(differences, 0.75).toFixed(2)}; ${batches} pairs of ${batch} requests), whose ` +
      `own is ${quantile(base, 0.5).toFixed(2)} µs`,
  );
}
