// An authorization server's token endpoint (OAuth 2.0 client credentials, RFC 6749 4.4) and its
// discovery document on loopback, and a service that takes the tokens it issued, for the
// TokenClient tests: tokens t1, t2... each issued on one request, a count of them, the client
// credentials it takes (HTTP Basic, form-encoded parts), tokens the service refuses (revoked),
// and faults (a status, a token of another type, going down).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { freePort } from "../free_port.ts";

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Listens on a free loopback port with `answer`; `down()` drops every connection. */
class LoopbackServer {
  readonly port: number;
  #server: Server | undefined;

  constructor(port: number) {
    this.port = port;
  }

  async listen(
    answer: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  ): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((req, res) => void answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.#server = server;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  }
}

/** The authorization server: `/token` and its discovery document. */
export class TokenEndpointServer extends LoopbackServer {
  /** Each token request's form (`grant_type`, `scope`), in order. */
  readonly requests: URLSearchParams[] = [];
  /** What the next token answers say of their lifetime, in seconds; none: no `expires_in`. */
  expiresIn: number | undefined = 300;
  /** The next answers' `token_type`. */
  tokenType = "Bearer";
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

  up(): Promise<void> {
    return this.listen((req, res) => this.#answer(req, res));
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await bodyOf(req);
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
    if (!this.#client(req.headers.authorization)) {
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
      access_token: `t${this.requests.length}`,
      token_type: this.tokenType,
    };
    if (this.expiresIn !== undefined) answer.expires_in = this.expiresIn;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  }

  #client(authorization: string | undefined): boolean {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? "");
    if (match === null) return false;
    const pair = atob(match[1]);
    const colon = pair.indexOf(":");
    const decoded = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    return colon >= 0 && decoded(pair.slice(0, colon)) === this.#clientId &&
      decoded(pair.slice(colon + 1)) === this.#clientSecret;
  }
}

/** One call the service received. */
export interface ServiceCall {
  readonly authorization: string | undefined;
  readonly body: string;
}

/** A service taking the tokens in `valid`: `200` with the caller's token, `401` otherwise. */
export class ServiceServer extends LoopbackServer {
  readonly calls: ServiceCall[] = [];
  /** The tokens it takes; any other is answered 401. */
  readonly valid = new Set<string>();
  /** Where every call is redirected (302) instead, when set. */
  redirectTo: string | undefined;

  static async start(): Promise<ServiceServer> {
    const server = new ServiceServer(await freePort());
    await server.listen((req, res) => server.#answer(req, res));
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/invoices`;
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await bodyOf(req);
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
