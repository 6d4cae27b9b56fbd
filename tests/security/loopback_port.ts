// The life cycle the security tests' servers share (issuer_server.ts, introspection_server.ts,
// token_endpoint_server.ts): a fixed loopback port, each request's whole body read before the
// server decides, going down (the port then refuses connections, every open one dropped, held
// ones included) and coming back on the same port. Also how such a server reads the client
// credentials of HTTP Basic, each part form-encoded (RFC 6749, 2.3.1), as Spring Authorization
// Server and Keycloak read them.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Buffer } from "node:buffer";

/** A server on one loopback port; a subclass answers. */
export abstract class LoopbackPort {
  readonly port: number;
  readonly #held = new Set<ServerResponse>();
  #server: Server | undefined;

  protected constructor(port: number) {
    this.port = port;
  }

  /** Answers `req`, whose body is `body`. */
  protected abstract answer(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
  ): void | Promise<void>;

  /** Leaves `res` unanswered until the server goes down. */
  protected hold(res: ServerResponse): void {
    this.#held.add(res);
  }

  /** Listens (again) on its port; nothing when it listens already. */
  async up(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((req, res) => {
      void this.#serve(req, res).catch(() => req.socket.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", resolve);
    });
    this.#server = server;
  }

  /** Stops listening and drops every connection, held ones included. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const res of this.#held) res.destroy();
    this.#held.clear();
    if (server === undefined) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await this.answer(req, res, Buffer.concat(chunks).toString("utf8"));
  }
}

/** The client id and secret of an `Authorization: Basic` header, or none. */
export function basicClient(
  authorization: string | undefined,
): { readonly id: string; readonly secret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization ?? "");
  if (match === null) return undefined;
  try {
    const pair = atob(match[1]);
    const colon = pair.indexOf(":");
    if (colon < 0) return undefined;
    const decoded = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    return { id: decoded(pair.slice(0, colon)), secret: decoded(pair.slice(colon + 1)) };
  } catch {
    // Not base64, or a part that is not form-encoded: no client.
    return undefined;
  }
}
