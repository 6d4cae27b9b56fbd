// An authorization server's introspection endpoint (RFC 7662) on loopback, for the opaque-token
// tests: the tokens it knows and what it says of each, the client credentials it takes (HTTP
// Basic), a count of the introspections, and its faults: answering a status, hanging without an
// answer, answering junk, and going down (the port then refuses connections).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { freePort } from "../free_port.ts";

/** What the endpoint does with the next requests. */
export type IntrospectionFault =
  | { readonly kind: "none" }
  | { readonly kind: "status"; readonly status: number }
  | { readonly kind: "hang" }
  | { readonly kind: "junk"; readonly body: string };

/** The endpoint: start it with {@linkcode IntrospectionServer.start}. */
export class IntrospectionServer {
  /** What it answers for each token: its claims (with `active`). Unknown tokens are inactive. */
  readonly tokens = new Map<string, Record<string, unknown>>();
  /** Introspections asked, each token as it was received. */
  readonly asked: string[] = [];
  /** Requests refused for their client credentials. */
  refusedClients = 0;
  fault: IntrospectionFault = { kind: "none" };
  readonly port: number;
  readonly #clientId: string;
  readonly #clientSecret: string;
  readonly #hanging = new Set<ServerResponse>();
  #server: Server | undefined;

  private constructor(port: number, clientId: string, clientSecret: string) {
    this.port = port;
    this.#clientId = clientId;
    this.#clientSecret = clientSecret;
  }

  /**
   * Serves on a free loopback port, taking `clientId` and `clientSecret` in HTTP Basic, each
   * form-encoded as RFC 6749 (2.3.1) says, as Spring Authorization Server and Keycloak read them.
   */
  static async start(clientId: string, clientSecret: string): Promise<IntrospectionServer> {
    const server = new IntrospectionServer(await freePort(), clientId, clientSecret);
    await server.up();
    return server;
  }

  /** The endpoint's URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/oauth2/introspect`;
  }

  /** Listens (again) on its port; nothing when it listens already. */
  async up(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((req, res) => void this.#answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.#server = server;
  }

  /** Stops listening and drops every connection, hanging ones included. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const res of this.#hanging) res.destroy();
    this.#hanging.clear();
    if (server === undefined) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  }

  #clientOf(authorization: string | undefined): boolean {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? "");
    if (match === null) return false;
    const pair = atob(match[1]);
    const colon = pair.indexOf(":");
    if (colon < 0) return false;
    const decoded = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    return decoded(pair.slice(0, colon)) === this.#clientId &&
      decoded(pair.slice(colon + 1)) === this.#clientSecret;
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (
      req.method !== "POST" || new URL(req.url ?? "/", "http://x").pathname !== "/oauth2/introspect"
    ) {
      res.writeHead(404).end();
      return;
    }
    if (!this.#clientOf(req.headers.authorization)) {
      this.refusedClients++;
      res.writeHead(401, { "www-authenticate": 'Basic realm="introspection"' }).end();
      return;
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
    const token = form.get("token") ?? "";
    this.asked.push(token);
    const fault = this.fault;
    if (fault.kind === "hang") {
      this.#hanging.add(res);
      return;
    }
    if (fault.kind === "status") {
      res.writeHead(fault.status, { "content-type": "application/json" }).end('{"error":"x"}');
      return;
    }
    if (fault.kind === "junk") {
      res.writeHead(200, { "content-type": "application/json" }).end(fault.body);
      return;
    }
    const claims = this.tokens.get(token) ?? { active: false };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(claims));
  }
}
