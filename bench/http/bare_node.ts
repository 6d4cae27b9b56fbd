// (c) on Node: the route on node:http itself, no framework and no fetch-API adapter, with the same
// checks as the framework versions (an integer id, a JSON body).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { user } from "./users.ts";

const USER_PATH = /^\/users\/([^/?]+)(?:\?|$)/;

function send(response: ServerResponse, status: number, json: string): void {
  response.writeHead(status, { "content-type": "application/json" }).end(json);
}

function create(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return send(response, 400, '{"error":"malformed JSON"}');
    }
    send(response, 200, JSON.stringify({ ...body, id: 1 }));
  });
}

/** A node:http server answering the benchmark's routes. */
export function bareNodeServer(): Server {
  return createServer((request, response) => {
    const url = request.url ?? "/";
    if (request.method === "POST" && (url === "/users" || url.startsWith("/users?"))) {
      return create(request, response);
    }
    const match = request.method === "GET" ? USER_PATH.exec(url) : null;
    if (match === null) return send(response, 404, '{"error":"not found"}');
    const id = Number(match[1]);
    if (!Number.isSafeInteger(id)) return send(response, 400, '{"error":"bad id"}');
    send(response, 200, JSON.stringify(user(id)));
  });
}
