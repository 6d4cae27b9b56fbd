// (d) POST /users in bare Hono, reading the body the way Thaw's RequestBody() does: the same
// Content-Type check (415), the declared length against the 1 MiB limit (413, before reading),
// strict UTF-8 and the `__proto__` scan, with Thaw's own functions, served as `app.listen` serves
// (on Node, with the body read before the handler). Thaw's distance to this server is what its
// controller layer costs; this server's distance to Hono is what those checks cost.
import { Hono } from "hono";
import { isJsonMediaType } from "../../src/http/media_type.ts";
import { DEFAULT_MAX_BODY_SIZE } from "../../src/http/http_request.ts";
import { readBodyText } from "../../src/http/read_body.ts";
import { nodeServerRequest } from "../../src/runtime/node_incoming.ts";
import { parseJson } from "../../src/http/parse_json.ts";

const app = new Hono();
app.post("/users", async (c) => {
  const type = nodeServerRequest.header(c.req.raw, c.env, "content-type");
  if (type === null || !isJsonMediaType(type)) return c.text("Unsupported Media Type", 415);
  const text = await readBodyText(c.req.raw, DEFAULT_MAX_BODY_SIZE, nodeServerRequest.body(c.env));
  const body = parseJson(text);
  return c.json({ ...(body as object), id: 1 });
});

/** The fetch handler every runtime serves. */
export const fetch: (request: Request) => Response | Promise<Response> = app.fetch;
