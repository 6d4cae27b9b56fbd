// A request sent through a transport's `fetch` and its answer read whole: the bean's way out where
// the transport does not read answers itself (the runtime's `fetch`).
import type { BodyLimit, Outgoing, Reading, Transport } from "../migrate/search/http/transport.ts";
import { wholeAnswer } from "./answer_bounds.ts";

/**
 * Sends `request` through `transport.fetch` and reads the answer whole within `limit`; `cancel`
 * aborts the request, and the read of its answer.
 */
export function readThroughFetch(
  transport: Transport,
  request: Outgoing,
  limit: BodyLimit,
): Reading {
  const abort = new AbortController();
  // Joined as text: resolved against the host, a path starting with `//` (an empty index name
  // makes one) would name another host, and the credentials would go there.
  const url = new URL(`${request.origin.origin}${request.path}`);
  // The runtime's fetch asks for compressed answers unless told otherwise: the node would then
  // compress every answer and the runtime decode it, CPU spent on both sides, where the official
  // client asks for compression only when `suggestCompression` says so. A request goes out the
  // same whichever way it takes.
  const headers = "accept-encoding" in request.headers
    ? request.headers
    : { ...request.headers, "accept-encoding": "identity" };
  const init: RequestInit = {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: request.body as BodyInit }),
    redirect: "manual",
    signal: abort.signal,
  };
  return {
    answer: transport.fetch(url, init, request.via).then((response) =>
      wholeAnswer(response, limit, abort)
    ),
    cancel: () => abort.abort(),
  };
}
