// (b) The same handlers written directly in Hono, as a Hono user writes them.
import { Hono } from "hono";
import { user } from "./users.ts";

const app = new Hono();
app.get("/users/:id", (c) => {
  const id = Number(c.req.param("id"));
  if (!Number.isSafeInteger(id)) return c.json({ error: "id must be an integer" }, 400);
  return c.json(user(id));
});
app.post("/users", async (c) => c.json({ ...(await c.req.json()), id: 1 }));

/** The fetch handler every runtime serves. */
export const fetch: (request: Request) => Response | Promise<Response> = app.fetch;
