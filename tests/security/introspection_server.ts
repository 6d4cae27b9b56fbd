// An authorization server's introspection endpoint (RFC 7662) on loopback, for the opaque-token
// tests: the tokens it knows and what it says of each, the client credentials it takes (HTTP
// Basic), a count of the introspections, and its faults: answering a status, hanging without an
// answer, answering junk, and going down (the port then refuses connections).
import type { IncomingMessage, ServerResponse } from "node:http";
import { freePort } from "../free_port.ts";
import { basicClient, LoopbackPort } from "./loopback_port.ts";

/** What the endpoint does with the next requests. */
export type IntrospectionFault =
  | { readonly kind: "none" }
  | { readonly kind: "status"; readonly status: number }
  | { readonly kind: "hang" }
  | { readonly kind: "junk"; readonly body: string };

/** The endpoint: start it with {@linkcode IntrospectionServer.start}. */
export class IntrospectionServer extends LoopbackPort {
  /** What it answers for each token: its claims (with `active`). Unknown tokens are inactive. */
  readonly tokens = new Map<string, Record<string, unknown>>();
  /** Introspections asked, each token as it was received. */
  readonly asked: string[] = [];
  /** Requests refused for their client credentials. */
  refusedClients = 0;
  fault: IntrospectionFault = { kind: "none" };
  readonly #clientId: string;
  readonly #clientSecret: string;

  private constructor(port: number, clientId: string, clientSecret: string) {
    super(port);
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

  protected answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    if (
      req.method !== "POST" || new URL(req.url ?? "/", "http://x").pathname !== "/oauth2/introspect"
    ) {
      res.writeHead(404).end();
      return;
    }
    const client = basicClient(req.headers.authorization);
    if (client?.id !== this.#clientId || client.secret !== this.#clientSecret) {
      this.refusedClients++;
      res.writeHead(401, { "www-authenticate": 'Basic realm="introspection"' }).end();
      return;
    }
    const form = new URLSearchParams(body);
    const token = form.get("token") ?? "";
    this.asked.push(token);
    const fault = this.fault;
    if (fault.kind === "hang") {
      this.hold(res);
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
