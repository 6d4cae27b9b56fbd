import type { SearchConnection } from "./search_connection.ts";
import type { Transport } from "./transport.ts";

/** A cluster's answer: the status and the parsed JSON body (`undefined` when there is none). */
export interface SearchResponse {
  readonly status: number;
  readonly body: unknown;
}

/** No host of a connection could be reached; names each host and the last cause. */
export class SearchTransportError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SearchTransportError";
  }
}

/** The `type` and `reason` of an OpenSearch error body, or a short form of whatever came back. */
export function errorDetail(body: unknown): string {
  if (body !== null && typeof body === "object" && "error" in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === "string") return error;
    if (error !== null && typeof error === "object") {
      const { type, reason } = error as { type?: unknown; reason?: unknown };
      return [type, reason].filter((x) => typeof x === "string").join(": ");
    }
  }
  if (body === undefined) return "no body";
  return JSON.stringify(body).slice(0, 300);
}

/**
 * Sends JSON requests to one connection: hosts in order, moving on only when a host cannot be
 * reached (refused, reset, DNS, timeout); an HTTP error status is an answer, returned as it is.
 * Credentials go only into the `Authorization` header, never into a message.
 */
export class SearchClient {
  /** Requests sent so far, host retries included. */
  requests = 0;
  readonly #connection: SearchConnection;
  readonly #transport: Transport;
  readonly #headers: Record<string, string>;
  // The host that answered last: later requests start there instead of retrying dead hosts.
  #preferred = 0;

  constructor(connection: SearchConnection, transport: Transport) {
    this.#connection = connection;
    this.#transport = transport;
    this.#headers = { accept: "application/json" };
    if (connection.username !== undefined) {
      const pair = new TextEncoder().encode(`${connection.username}:${connection.password ?? ""}`);
      this.#headers.authorization = `Basic ${btoa(String.fromCharCode(...pair))}`;
    }
  }

  /** Sends one request; `path` starts with `/` and may carry a query. */
  async send(method: string, path: string, body?: unknown): Promise<SearchResponse> {
    const hosts = this.#connection.hosts;
    const headers = { ...this.#headers };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const causes: string[] = [];
    for (let i = 0; i < hosts.length; i++) {
      const index = (this.#preferred + i) % hosts.length;
      const url = join(hosts[index], path);
      this.requests++;
      let response: Response;
      try {
        response = await this.#transport.fetch(url, {
          method,
          headers,
          body: payload,
          redirect: "manual",
          signal: AbortSignal.timeout(this.#connection.timeoutMs),
        });
      } catch (error) {
        causes.push(`${hosts[index].origin}: ${describe(error, this.#connection.timeoutMs)}`);
        continue;
      }
      this.#preferred = index;
      const text = await response.text();
      let parsed: unknown;
      if (text !== "") {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = { error: text.slice(0, 300) };
        }
      }
      return { status: response.status, body: parsed };
    }
    throw new SearchTransportError(
      `${method} ${path.split("?", 1)[0]}: no host of "${this.#connection.name}" answered (${
        causes.join("; ")
      })`,
    );
  }
}

function join(host: URL, path: string): URL {
  const base = host.href.endsWith("/") ? host.href.slice(0, -1) : host.href;
  return new URL(base + path);
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message} (${cause})` : String(e?.message ?? error);
}
