// (c) on Deno and Bun: the route on the runtime's bare server, no framework, with the same checks
// as the framework versions (an integer id, a JSON body).
import { user } from "./users.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const USER_PATH = /^\/users\/([^/]+)$/;

async function create(request: Request): Promise<Response> {
  const body = await request.json() as Record<string, unknown>;
  return new Response(JSON.stringify({ ...body, id: 1 }), { headers: JSON_HEADERS });
}

/** The fetch handler `Deno.serve` and `Bun.serve` run. */
export function fetch(request: Request): Response | Promise<Response> {
  const { pathname } = new URL(request.url);
  if (request.method === "POST" && pathname === "/users") return create(request);
  const match = request.method === "GET" ? USER_PATH.exec(pathname) : null;
  if (match === null) return new Response("Not Found", { status: 404 });
  const id = Number(match[1]);
  if (!Number.isSafeInteger(id)) return new Response("Bad Request", { status: 400 });
  return new Response(JSON.stringify(user(id)), { headers: JSON_HEADERS });
}
