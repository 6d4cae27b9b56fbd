// An authorization server's token endpoint (OAuth 2.0 client credentials, RFC 6749 4.4) and its
// discovery document on loopback, and a service that takes the tokens it issued, for the
// TokenClient tests: tokens t1, t2... each issued on one request, a count of them, the client
// credentials it takes (HTTP Basic, form-encoded parts), tokens the service refuses (revoked),
// and faults (a status, a token of another type, going down).
import type { IncomingMessage, ServerResponse } from "node:http";
import { freePort } from "../free_port.ts";
import { basicClient, LoopbackPort } from "./loopback_port.ts";

/** The authorization server: `/token` and its discovery document. */
export class TokenEndpointServer extends LoopbackPort {
  /** Each token request's form (`grant_type`, `scope`), in order. */
  readonly requests: URLSearchParams[] = [];
  /** What the next token answers say of their lifetime, in seconds; none: no `expires_in`. */
  expiresIn: number | string | undefined = 300;
  /** The next answers' `token_type`. */
  tokenType = "Bearer";
  /** The `n`th token issued (from 1); `t<n>` when not set. */
  accessToken: ((n: number) => string) | undefined;
  /** A status every token request is answered with instead of a token. */
  failWith: number | undefined;
  readonly #clientId: string;
  readonly #clientSecret: string;

  private constructor(port: number, clientId: string, clientSecret: string) {
    super(port);
    this.#clientId = clientId;
    this.#clientSecret = clientSecret;
  }

  /** Serves on a free loopback port, taking the client `clientId`/`clientSecret`. */
  static async start(clientId: string, clientSecret: string): Promise<TokenEndpointServer> {
    const server = new TokenEndpointServer(await freePort(), clientId, clientSecret);
    await server.up();
    return server;
  }

  /** The issuer's URL; its discovery document names {@linkcode TokenEndpointServer.tokenUrl}. */
  get issuer(): string {
    return `http://127.0.0.1:${this.port}/issuer`;
  }

  get tokenUrl(): string {
    return `http://127.0.0.1:${this.port}/issuer/token`;
  }

  /** Tokens issued so far. */
  get issued(): number {
    return this.requests.length;
  }

  protected answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/issuer/.well-known/openid-configuration") {
      res.writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer: this.issuer, token_endpoint: this.tokenUrl }));
      return;
    }
    if (path !== "/issuer/token" || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const client = basicClient(req.headers.authorization);
    if (client?.id !== this.#clientId || client.secret !== this.#clientSecret) {
      res.writeHead(401, { "content-type": "application/json" })
        .end('{"error":"invalid_client"}');
      return;
    }
    if (this.failWith !== undefined) {
      res.writeHead(this.failWith, { "content-type": "application/json" })
        .end('{"error":"temporarily_unavailable"}');
      return;
    }
    const form = new URLSearchParams(body);
    if (form.get("grant_type") !== "client_credentials") {
      res.writeHead(400, { "content-type": "application/json" })
        .end('{"error":"unsupported_grant_type"}');
      return;
    }
    this.requests.push(form);
    const answer: Record<string, unknown> = {
      access_token: this.accessToken?.(this.requests.length) ?? `t${this.requests.length}`,
      token_type: this.tokenType,
    };
    if (this.expiresIn !== undefined) answer.expires_in = this.expiresIn;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  }
}

/** One call the service received. */
export interface ServiceCall {
  readonly authorization: string | undefined;
  readonly body: string;
}

/** A service taking the tokens in `valid`: `200` with the caller's token, `401` otherwise. */
export class ServiceServer extends LoopbackPort {
  readonly calls: ServiceCall[] = [];
  /** The tokens it takes; any other is answered 401. */
  readonly valid = new Set<string>();
  /** Where every call is redirected (302) instead, when set. */
  redirectTo: string | undefined;

  static async start(): Promise<ServiceServer> {
    const server = new ServiceServer(await freePort());
    await server.up();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/invoices`;
  }

  protected answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const authorization = req.headers.authorization;
    this.calls.push({ authorization, body });
    if (this.redirectTo !== undefined) {
      res.writeHead(302, { location: this.redirectTo }).end();
      return;
    }
    const token = authorization?.startsWith("Bearer ") ? authorization.slice(7) : undefined;
    if (token === undefined || !this.valid.has(token)) {
      res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end(`served ${token}`);
  }
}
