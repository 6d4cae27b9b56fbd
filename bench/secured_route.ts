/**
 * What `security()` adds to a request, in-process, on the runtime that runs this file
 * (`npm run bench:security` runs it on Deno, Bun, Node 20 and Node 26):
 *
 *   deno run -A bench/secured_route.ts [--batches 10] [--batch 1000]
 *
 * The same Thaw controller (`GET /x` answering a text) in an app without security (the baseline),
 * and in apps with `security()` whose public key is given inline (RS256, then ES256: the cached-key
 * path every request after the first takes with a key set too), each request carrying a valid
 * token; beside them, bare Hono and Hono behind its own `jwk` middleware, for what a JWT check costs
 * there. Batches of `batch` requests through `app.fetch` run in turn, the order alternating; measured
 * is the process's CPU time (user + system: Web Crypto may verify on another thread) per request.
 * Reported per algorithm: each app's CPU per request, and the secured route's ratio to the same
 * route without security (median of the batches, the middle half in brackets), and what the check
 * adds against what Hono's `jwk` adds.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { jwk } from "hono/jwk";
import * as jose from "jose";
import { bootstrap, GetMapping, RestController } from "../mod.ts";
import { security } from "../security.ts";
import { cpuMs, quartiles, runtimeName } from "./measure.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "10" },
    batch: { type: "string", default: "1000" },
  },
});
const BATCHES = Number(values.batches);
const BATCH = Number(values.batch);

const runtime = runtimeName();

@RestController()
class Route {
  @GetMapping("/x")
  x(): string {
    return "ok";
  }
}

type Fetch = (request: Request) => Response | Promise<Response>;

async function thawApp(pem?: string): Promise<Fetch> {
  const app = await bootstrap({
    controllers: [Route],
    ...(pem === undefined ? {} : {
      config: { security: { oauth2: { resourceserver: { jwt: { "public-key": pem } } } } },
      security: security(),
    }),
  });
  return app.fetch;
}

function honoApp(check?: Parameters<Hono["use"]>[1]): Fetch {
  const hono = new Hono();
  if (check !== undefined) hono.use("/x", check);
  hono.get("/x", (c) => c.text("ok"));
  return hono.fetch;
}

/** CPU per request of one batch, in µs. */
async function batch(fetch: Fetch, token: string): Promise<number> {
  const headers = { authorization: `Bearer ${token}` };
  const start = cpuMs();
  for (let i = 0; i < BATCH; i++) {
    const response = await fetch(new Request("http://localhost/x", { headers }));
    if (response.status !== 200) throw new Error(`${response.status}`);
    await response.text();
  }
  return (cpuMs() - start) * 1000 / BATCH;
}

const plain = await thawApp();
console.log(`${runtime}: ${BATCHES} rounds of batches of ${BATCH} requests, CPU per request`);
for (const alg of ["RS256", "ES256"] as const) {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const now = Math.floor(Date.now() / 1000);
  const token = await new jose.SignJWT({ sub: "alice", scope: "orders:read", exp: now + 3600 })
    .setProtectedHeader({ alg, kid: "k1", typ: "JWT" }).sign(privateKey);
  const apps: Record<string, Fetch> = {
    plain,
    secured: await thawApp(await jose.exportSPKI(publicKey)),
    hono: honoApp(),
    honoJwk: honoApp(jwk({
      keys: [{ ...(await jose.exportJWK(publicKey)), kid: "k1", alg }] as never,
      alg: [alg],
    })),
  };
  const names = Object.keys(apps);
  for (const name of names) await batch(apps[name], token); // warm up
  const costs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const ratios: number[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse();
    const round: Record<string, number> = {};
    for (const name of order) round[name] = await batch(apps[name], token);
    for (const name of names) costs[name].push(round[name]);
    ratios.push(round.secured / round.plain);
  }
  const med = (name: string) => quartiles(costs[name])[1];
  const [r1, r2, r3] = quartiles(ratios);
  console.log(
    `${alg}: Thaw route ${med("plain").toFixed(1)} µs, secured ${med("secured").toFixed(1)} µs ` +
      `(${r2.toFixed(2)}x the route without security, ${r1.toFixed(2)}..${r3.toFixed(2)}; ` +
      `+${(med("secured") - med("plain")).toFixed(1)} µs); Hono ${med("hono").toFixed(1)} µs, ` +
      `behind jwk ${med("honoJwk").toFixed(1)} µs (+${
        (med("honoJwk") - med("hono")).toFixed(1)
      } µs)`,
  );
}
