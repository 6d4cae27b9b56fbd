// The bean's way out on Deno: plain HTTP through node:http, HTTPS through Deno's fetch. The
// official client's own connection is node:http, and on Deno node:http costs a request less CPU
// than fetch and a Response. HTTPS stays on fetch, so that the certificates it trusts (`--cert`,
// `DENO_CERT`, `DENO_TLS_CA_STORE`) keep deciding which clusters are reached.
import type { ReadingTransport, Transport } from "../migrate/search/http/transport.ts";
import { readThroughFetch } from "./fetch_reading.ts";

/** What this file reads of `Deno`: the environment, and whether it may read it. */
export interface DenoEnvironment {
  readonly env: { get(name: string): string | undefined };
  readonly permissions: {
    querySync(descriptor: { name: "env"; variable: string }): { state: string };
  };
}

// Where Deno's fetch takes a proxy from when the connection names none, in either case.
const PROXY_VARIABLES: readonly string[] = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]
  .flatMap((name) => [name, name.toLowerCase()]);

/**
 * Whether Deno's `fetch` may go through a proxy the environment names: one is set, or this
 * process may not read a variable that would tell, or cannot ask (only `fetch` honours them then).
 */
export function environmentProxy(deno: DenoEnvironment): boolean {
  try {
    return PROXY_VARIABLES.some((variable) =>
      deno.permissions.querySync({ name: "env", variable }).state !== "granted" ||
      (deno.env.get(variable) ?? "") !== ""
    );
  } catch {
    // A Deno without the synchronous permission query (a hosted one): fetch, as before.
    return true;
  }
}

/**
 * `node` (node:http, which has `read`) for `http:` URLs and `fetch` for the others. It sends no GET
 * body, as `fetch` cannot: a request goes out the same whichever way it takes.
 */
export function plainHttpOnNode(fetch: Transport, node: ReadingTransport): ReadingTransport {
  const plain = (url: URL) => url.protocol === "http:";
  return {
    fetch: (url, init, via) => (plain(url) ? node : fetch).fetch(url, init, via),
    read: (request, limit) =>
      plain(request.origin) ? node.read(request, limit) : readThroughFetch(fetch, request, limit),
    close() {
      fetch.close();
      node.close();
    },
  };
}
