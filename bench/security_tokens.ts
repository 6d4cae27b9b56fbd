/**
 * What many issuers and opaque tokens cost per request, in-process, on the runtime that runs this
 * file (`npm run bench:tokens` runs it on Deno, Bun and Node 26):
 *
 *   deno run -A bench/security_tokens.ts [--batches 10] [--batch 1000]
 *
 * The same Thaw route (`GET /x` answering a text) behind `security()` checking, each request:
 * a JWT of one issuer (`issuer-uri`: the baseline), a JWT of one of two trusted issuers (`issuers`,
 * tokens of both in turn), and an opaque token the introspection endpoint said is active (kept:
 * after the first request, no introspection). The issuers and the endpoint are real HTTP servers on
 * loopback, asked only at the first tokens. Batches of `batch` requests through `app.fetch` run in
 * turn, the order alternating; measured is the process's CPU time (user + system) per request.
 * Reported: each check's CPU per request and its ratio to the single issuer's (median of the
 * batches, the middle half in brackets).
 *
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
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

interface Issuer {
  readonly privateKey: CryptoKey;
  readonly jwk: jose.JWK;
  url: string;
}

async function issuer(kid: string): Promise<Issuer> {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256");
  return { privateKey, jwk: { ...(await jose.exportJWK(publicKey)), kid, alg: "ES256" }, url: "" };
}

// The issuers' discovery documents and key sets, and the introspection endpoint, on one port.
async function serve(
  issuers: Issuer[],
  active: string,
): Promise<{ origin: string; close(): void }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const json = (body: unknown) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    const i = issuers.findIndex((_, n) => path.startsWith(`/i${n}/`));
    if (i >= 0 && path.endsWith("/.well-known/openid-configuration")) {
      return json({ issuer: issuers[i].url, jwks_uri: `${issuers[i].url}/keys` });
    }
    if (i >= 0 && path.endsWith("/keys")) return json({ keys: [issuers[i].jwk] });
    if (path === "/introspect") {
      let body = "";
      req.on("data", (chunk) => body += chunk);
      req.on("end", () => {
        const token = new URLSearchParams(body).get("token");
        json(
          token === active
            ? { active: true, sub: "alice", scope: "orders:read", exp: 4_000_000_000 }
            : { active: false },
        );
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuers.forEach((issuer, n) => issuer.url = `${origin}/i${n}`);
  return { origin, close: () => server.close() };
}

async function app(jwt: Record<string, unknown>, opaque?: Record<string, unknown>): Promise<Fetch> {
  const resourceserver = opaque === undefined ? { jwt } : { opaquetoken: opaque };
  const made = await bootstrap({
    controllers: [Route],
    config: { security: { oauth2: { resourceserver } } },
    security: security(),
  });
  return made.fetch;
}

async function signed(issuer: Issuer): Promise<string> {
  return await new jose.SignJWT({ sub: "alice", scope: "orders:read", iss: issuer.url })
    .setProtectedHeader({ alg: "ES256", kid: issuer.jwk.kid!, typ: "JWT" })
    .setExpirationTime("2h").sign(issuer.privateKey);
}

/** CPU per request of one batch, in µs, the tokens taken in turn. */
async function batch(fetch: Fetch, tokens: readonly string[]): Promise<number> {
  const headers = tokens.map((token) => ({ authorization: `Bearer ${token}` }));
  const start = cpuMs();
  for (let i = 0; i < BATCH; i++) {
    const response = await fetch(
      new Request("http://localhost/x", { headers: headers[i % headers.length] }),
    );
    if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
    await response.text();
  }
  return (cpuMs() - start) * 1000 / BATCH;
}

const [a, b] = [await issuer("a"), await issuer("b")];
const opaqueToken = crypto.randomUUID();
const servers = await serve([a, b], opaqueToken);
const [tokenA, tokenB] = [await signed(a), await signed(b)];
const cases: Record<string, { fetch: Fetch; tokens: string[] }> = {
  single: { fetch: await app({ "issuer-uri": a.url }), tokens: [tokenA] },
  twoIssuers: {
    fetch: await app({ issuers: [{ "issuer-uri": a.url }, { "issuer-uri": b.url }] }),
    tokens: [tokenA, tokenB],
  },
  opaque: {
    fetch: await app({}, {
      "introspection-uri": `${servers.origin}/introspect`,
      "client-id": "bench",
      "client-secret": "bench-secret",
    }),
    tokens: [opaqueToken],
  },
};
console.log(`${runtime}: ${BATCHES} rounds of batches of ${BATCH} requests, CPU per request`);
const names = Object.keys(cases);
for (const name of names) await batch(cases[name].fetch, cases[name].tokens); // warm up, keys fetched
const costs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const ratios: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < BATCHES; i++) {
  const order = i % 2 === 0 ? names : [...names].reverse();
  const round: Record<string, number> = {};
  for (const name of order) round[name] = await batch(cases[name].fetch, cases[name].tokens);
  for (const name of names) {
    costs[name].push(round[name]);
    ratios[name].push(round[name] / round.single);
  }
}
for (const name of names) {
  const [r1, r2, r3] = quartiles(ratios[name]);
  console.log(
    `${name}: ${quartiles(costs[name])[1].toFixed(1)} µs per request, ` +
      `${r2.toFixed(2)}x the single issuer's (${r1.toFixed(2)}..${r3.toFixed(2)})`,
  );
}
servers.close();
