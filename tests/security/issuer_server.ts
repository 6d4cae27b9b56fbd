// An identity provider on loopback for the resource server's tests: its discovery document and its
// key set (JWKS) over real HTTP, keys that rotate, a count of the requests of each path, and a way
// to go down (the port then refuses connections) and come back on the same port.
import type { IncomingMessage, ServerResponse } from "node:http";
import * as jose from "jose";
import { freePort } from "../free_port.ts";
import { LoopbackPort } from "./loopback_port.ts";

/** A signing key of the issuer: its private half signs, its public JWK is served. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly jwk: jose.JWK;
}

/** Makes a key pair of `alg` named `kid`. */
export async function signingKey(kid: string, alg = "RS256"): Promise<SigningKey> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey, publicKey, jwk };
}

/** The issuer: start it with {@linkcode IssuerServer.start}. */
export class IssuerServer extends LoopbackPort {
  /** The keys served, in order: change it to rotate. */
  keys: SigningKey[];
  /** Requests served, by path. */
  readonly hits = new Map<string, number>();
  /** What the discovery document says the issuer is: the URL itself unless changed. */
  issuerClaim: string | undefined;

  private constructor(port: number, keys: SigningKey[]) {
    super(port);
    this.keys = keys;
  }

  /** Serves `keys` on a free loopback port. */
  static async start(keys: SigningKey[]): Promise<IssuerServer> {
    const issuer = new IssuerServer(await freePort(), keys);
    await issuer.up();
    return issuer;
  }

  /** The issuer's URL (`iss`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/realms/test`;
  }

  /** The key set's URL. */
  get jwksUrl(): string {
    return `http://127.0.0.1:${this.port}/realms/test/keys`;
  }

  /** Requests of a path so far. */
  count(path: "discovery" | "jwks"): number {
    const url = new URL(
      path === "jwks" ? this.jwksUrl : `${this.url}/.well-known/openid-configuration`,
    );
    return this.hits.get(url.pathname) ?? 0;
  }

  protected answer(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    let body: unknown;
    if (path === new URL(this.jwksUrl).pathname) {
      body = { keys: this.keys.map((k) => k.jwk) };
    } else if (path === "/realms/test/.well-known/openid-configuration") {
      body = { issuer: this.issuerClaim ?? this.url, jwks_uri: this.jwksUrl };
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}

/** A signed token: `claims` over the defaults (`iss`, `sub`, `aud`, `iat`, `exp` in an hour). */
export async function token(
  key: { kid: string; alg: string; privateKey: CryptoKey | Uint8Array },
  claims: jose.JWTPayload,
  now: number,
  header: Partial<jose.JWTHeaderParameters> = {},
): Promise<string> {
  const seconds = Math.floor(now / 1000);
  return await new jose.SignJWT({ sub: "alice", iat: seconds, exp: seconds + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...header })
    .sign(key.privateKey);
}
