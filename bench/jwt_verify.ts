/**
 * What checking a bearer token costs per request, in-process, on the runtime that runs this file
 * (`npm run bench:jwt` runs it on Deno, Bun and Node 26):
 *
 *   deno run -A bench/jwt_verify.ts [--batches 10] [--batch 1000]
 *
 * Three Hono apps answer `GET /x` with the same text: one without a check (the floor), one behind
 * Hono's own `jwk` middleware (`hono/jwk`, the baseline) given the issuer's keys, one behind a
 * middleware of a few lines around Thaw's `JwtVerifier` (src/security) whose key set was fetched
 * once (the cached-key path every request after the first takes). The same RS256 token, then the
 * same ES256 token, goes to each. Batches of `batch` requests through `app.request` of the
 * baseline and of Thaw run in turn (A B, then B A), the floor's batch beside them; measured is the
 * process's CPU time (user + system: Web Crypto may verify on another thread), per request, less
 * the floor's. Reported per algorithm: each check's CPU per request, and Thaw's ratio to the
 * baseline's, median of the pairs with the middle half in brackets.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hono, type MiddlewareHandler } from "hono";
import { jwk } from "hono/jwk";
import * as jose from "jose";
import { JwtVerifier } from "../src/security/jwt_verifier.ts";
import type { JwtSettings } from "../src/security/jwt_settings.ts";
import { cpuMs, quartiles, runtimeName } from "./measure.ts";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "10" },
    batch: { type: "string", default: "1000" },
  },
});
const BATCHES = Number(values.batches);
const BATCH = Number(values.batch);
const ISSUER = "https://id.example.com/realms/bench";

const runtime = runtimeName();

async function keyPair(alg: "RS256" | "ES256") {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await jose.exportJWK(publicKey)), kid: `${alg}-1`, alg, use: "sig" };
  const now = Math.floor(Date.now() / 1000);
  const token = await new jose.SignJWT({
    sub: "alice",
    iss: ISSUER,
    aud: "orders",
    scope: "orders:read",
    iat: now,
    exp: now + 3600,
  }).setProtectedHeader({ alg, kid: publicJwk.kid, typ: "JWT" }).sign(privateKey);
  return { alg, publicJwk, token };
}

const pairs = [await keyPair("RS256"), await keyPair("ES256")];
const jwks = { keys: pairs.map((p) => p.publicJwk) };

const settings: JwtSettings = {
  keys: { kind: "jwk-set", url: "https://id.example.com/keys" },
  issuer: ISSUER,
  audiences: ["orders"],
  algorithms: ["RS256", "ES256"],
  principalClaim: "sub",
  authorityPrefix: "SCOPE_",
  clockSkewMs: 60_000,
};
// The key set is served in-process: only its first fetch happens, before the batches.
const verifier = await JwtVerifier.create(settings, {
  fetch: () => Promise.resolve(Response.json(jwks)),
});

const thawCheck: MiddlewareHandler = async (c, next) => {
  const header = c.req.header("authorization");
  if (header === undefined || !header.startsWith("Bearer ")) return c.text("", 401);
  try {
    c.set("jwtPayload" as never, (await verifier.verify(header.slice(7))).claims as never);
  } catch {
    return c.text("", 401);
  }
  await next();
};

function app(check?: MiddlewareHandler): Hono {
  const hono = new Hono();
  if (check !== undefined) hono.use("/x", check);
  hono.get("/x", (c) => c.text("ok"));
  return hono;
}

const apps = {
  floor: app(),
  hono: app(jwk({
    keys: jwks.keys as never,
    alg: ["RS256", "ES256"],
    verification: { iss: ISSUER, aud: "orders" },
  })),
  thaw: app(thawCheck),
};

/** CPU per request of one batch, in µs. */
async function batch(which: keyof typeof apps, token: string): Promise<number> {
  const init = { headers: { authorization: `Bearer ${token}` } };
  const start = cpuMs();
  for (let i = 0; i < BATCH; i++) {
    const response = await apps[which].request("/x", init);
    if (response.status !== 200) throw new Error(`${which}: ${response.status}`);
    await response.text();
  }
  return (cpuMs() - start) * 1000 / BATCH;
}

console.log(`${runtime}: ${BATCHES} pairs of batches of ${BATCH} requests, CPU per request`);
for (const { alg, token } of pairs) {
  for (const which of ["floor", "hono", "thaw"] as const) await batch(which, token);
  const honoCosts: number[] = [];
  const thawCosts: number[] = [];
  const ratios: number[] = [];
  const floors: number[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const floor = await batch("floor", token);
    let hono: number;
    let thaw: number;
    if (i % 2 === 0) {
      hono = await batch("hono", token);
      thaw = await batch("thaw", token);
    } else {
      thaw = await batch("thaw", token);
      hono = await batch("hono", token);
    }
    floors.push(floor);
    honoCosts.push(hono - floor);
    thawCosts.push(thaw - floor);
    ratios.push((thaw - floor) / (hono - floor));
  }
  const [h1, h2, h3] = quartiles(honoCosts);
  const [t1, t2, t3] = quartiles(thawCosts);
  const [r1, r2, r3] = quartiles(ratios);
  const [, f2] = quartiles(floors);
  console.log(
    `${alg}: hono/jwk ${h2.toFixed(1)} µs (${h1.toFixed(1)}..${h3.toFixed(1)}), ` +
      `Thaw ${t2.toFixed(1)} µs (${t1.toFixed(1)}..${t3.toFixed(1)}), ` +
      `Thaw/Hono ${r2.toFixed(2)}x (${r1.toFixed(2)}..${r3.toFixed(2)}); ` +
      `a request without a check ${f2.toFixed(1)} µs`,
  );
}
