import type { IncomingMessage, ServerResponse } from "node:http";

type Fetch = (request: Request) => Response | Promise<Response>;
type Listener = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

/**
 * The node:http request listener of `app.listen` on Node: Hono's adapter, with one change. A body
 * of declared length within the limit is read into `incoming.rawBody` before the request goes on,
 * as Node hosts such as Cloud Functions do; the adapter and Thaw's body binding then take the
 * bytes as they are, instead of wrapping the socket in a web stream to read the same bytes back
 * (about three times the cost per request with a small JSON body). Bodies without a length, or
 * over the limit, are left to the stream, where the limit answers 413.
 *
 * Everything Node-only is imported dynamically: this file is bundled for workerd too.
 */
export async function nodeRequestListener(
  fetch: Fetch,
  hostname: string,
  maxBodySize: number,
): Promise<Listener> {
  const [{ getRequestListener }, { Buffer }] = await Promise.all([
    import("@hono/node-server"),
    import("node:buffer"),
  ]);
  const listener = getRequestListener(fetch, { hostname });
  return (incoming, outgoing) => {
    if (incoming.method === "GET" || incoming.method === "HEAD") {
      void listener(incoming, outgoing);
      return;
    }
    // Node builds `incoming.headers` on first use (the adapter reads rawHeaders): only here.
    const declared = incoming.headers["content-length"];
    if (declared === undefined || !/^\d+$/.test(declared) || Number(declared) > maxBodySize) {
      void listener(incoming, outgoing);
      return;
    }
    const chunks: Uint8Array[] = [];
    incoming.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    incoming.on("end", () => {
      (incoming as IncomingMessage & { rawBody?: Uint8Array }).rawBody = chunks.length === 1
        ? chunks[0]
        : Buffer.concat(chunks);
      void listener(incoming, outgoing);
    });
    // The client went away before its body arrived: there is nobody to answer.
    incoming.on("error", () => outgoing.destroy());
  };
}
