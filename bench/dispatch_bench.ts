// In-process cost of Thaw's dispatch over the same handler written in bare Hono
// (`npm run bench:dispatch`): `deno bench` runs both in one process and prints Thaw's time relative
// to the Hono baseline. No sockets: this isolates routing, binding and response building, for
// profiling; the figures that count come from bench/http/run.ts, over real sockets.
import { Hono } from "hono";
import {
  bootstrap,
  GetMapping,
  PathVariable,
  PostMapping,
  RequestBody,
  RestController,
} from "../mod.ts";

const user = (id: number) => ({ id, name: "Ada", email: "ada@example.com" });

@RestController()
class UserController {
  @GetMapping("/users/{id}", PathVariable("id", Number))
  get(id: number) {
    return user(id);
  }
  @PostMapping("/users", RequestBody())
  create(body: Record<string, unknown>) {
    return { ...body, id: 1 };
  }
}

const thaw = await bootstrap({ controllers: [UserController] });
const hono = new Hono();
hono.get("/users/:id", (c) => {
  const id = Number(c.req.param("id"));
  if (!Number.isSafeInteger(id)) return c.json({ error: "bad id" }, 400);
  return c.json(user(id));
});
hono.post("/users", async (c) => c.json({ ...(await c.req.json()), id: 1 }));

const getRequest = () => new Request("http://localhost/users/42");
const body = JSON.stringify({ name: "Ada", email: "ada@example.com" });
const postRequest = () =>
  new Request("http://localhost/users", {
    method: "POST",
    body,
    // As over HTTP/1.1: a body of known size is sent with its length.
    headers: { "content-type": "application/json", "content-length": String(body.length) },
  });

Deno.bench("GET /users/{id}: bare Hono", { group: "get", baseline: true }, async () => {
  await (await hono.fetch(getRequest())).text();
});
Deno.bench("GET /users/{id}: Thaw", { group: "get" }, async () => {
  await (await thaw.fetch(getRequest())).text();
});
Deno.bench("POST /users: bare Hono", { group: "post", baseline: true }, async () => {
  await (await hono.fetch(postRequest())).text();
});
Deno.bench("POST /users: Thaw", { group: "post" }, async () => {
  await (await thaw.fetch(postRequest())).text();
});
