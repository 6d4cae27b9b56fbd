// (b) The same handlers written directly in Hono, as a Hono user writes them.
import { Hono } from "hono";
import { benchMiddleware } from "./middleware.ts";
import { user } from "./users.ts";

type Fetch = (request: Request) => Response | Promise<Response>;

/** The fetch handler; with `middleware`, `cors()` and `secureHeaders()` on every path. */
export function honoFetch(middleware = false): Fetch {
  const app = new Hono();
  if (middleware) app.use("*", ...benchMiddleware());
  app.get("/users/:id", (c) => {
    const id = Number(c.req.param("id"));
    if (!Number.isSafeInteger(id)) return c.json({ error: "id must be an integer" }, 400);
    return c.json(user(id));
  });
  app.post("/users", async (c) => c.json({ ...(await c.req.json()), id: 1 }));
  return app.fetch;
}

/** The fetch handler every runtime serves, without middleware. */
export const fetch: Fetch = honoFetch();
