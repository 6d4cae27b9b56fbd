// (e) POST /users in bare Hono as a careful Hono user writes it, with Hono's own helpers: the
// `bodyLimit` middleware (1 MiB, as Thaw's default) and `validator("json")`, which refuses a
// Content-Type that is not JSON and a body that does not parse. Served as Hono is (Deno.serve,
// Bun.serve, @hono/node-server), so that its distance to Hono is what these two cost in Hono
// itself, beside what Thaw's checks cost in checked_app.ts.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { validator } from "hono/validator";

const app = new Hono();
app.post(
  "/users",
  bodyLimit({ maxSize: 1024 * 1024, onError: (c) => c.text("Payload Too Large", 413) }),
  validator("json", (value, c) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return c.text("Bad Request", 400);
    }
    return value as Record<string, unknown>;
  }),
  (c) => c.json({ ...c.req.valid("json"), id: 1 }),
);

/** The fetch handler every runtime serves. */
export const fetch: (request: Request) => Response | Promise<Response> = app.fetch;
