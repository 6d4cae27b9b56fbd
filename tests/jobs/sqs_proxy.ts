// A loopback proxy in front of an SQS endpoint (ElasticMQ), for faults at one action: the SDK's
// JSON protocol names each call's action in its `x-amz-target` header (`AmazonSQS.SendMessage`).
// `before` may hold a request before it is passed on, `after` its answer before it is given back;
// either throwing drops the connection, which the SDK tries again as it would a network fault.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Buffer } from "node:buffer";

/** What the proxy does at one call, by its action (`SendMessage`, `ReceiveMessage`, ...). */
export interface ProxyHooks {
  before?(action: string): Promise<void> | void;
  after?(action: string): Promise<void> | void;
}

/** A proxy on a free loopback port; `actions` lists the calls it passed on, in order. */
export class SqsProxy {
  readonly endpoint: string;
  readonly actions: string[];
  readonly #server: Server;

  private constructor(server: Server, endpoint: string, actions: string[]) {
    this.#server = server;
    this.endpoint = endpoint;
    this.actions = actions;
  }

  /** Starts one in front of `upstream`. */
  static async start(upstream: string, hooks: ProxyHooks): Promise<SqsProxy> {
    const actions: string[] = [];
    const server = createServer((request, response) => {
      void pass(upstream, hooks, request, response, (action) => actions.push(action));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    return new SqsProxy(server, `http://127.0.0.1:${port}`, actions);
  }

  /** Stops listening and drops its connections. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

async function pass(
  upstream: string,
  hooks: ProxyHooks,
  request: IncomingMessage,
  response: ServerResponse,
  seen: (action: string) => void,
): Promise<void> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const action = String(request.headers["x-amz-target"] ?? "").replace(/^AmazonSQS\./, "");
    await hooks.before?.(action);
    seen(action);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && !/^(host|connection|content-length)$/i.test(name)) {
        headers.set(name, value);
      }
    }
    const answer = await fetch(new URL(request.url ?? "/", upstream), {
      method: request.method ?? "POST",
      headers,
      body: request.method === "GET" ? null : new Uint8Array(Buffer.concat(chunks)),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    await hooks.after?.(action);
    // The answer's headers as they came (the SDK reads an error's name from some), but those
    // of the connection and the body's framing, which this answer sets anew.
    const given: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (
        !/^(connection|keep-alive|transfer-encoding|content-length|content-encoding)$/i.test(name)
      ) {
        given[name] = value;
      }
    });
    response.writeHead(answer.status, given);
    response.end(body);
  } catch {
    response.destroy();
  }
}
