// In-process cost of Thaw's dispatch over the same handler written in bare Hono
// (`npm run bench:dispatch`): `deno bench` runs both in one process and prints Thaw's time relative
// to the Hono baseline. No sockets: this isolates routing, binding and response building, for
// profiling; the figures that count come from bench/http/run.ts, over real sockets.
import { fetch as hono, honoFetch } from "./http/hono_app.ts";
import { app as thaw, thawApp } from "./http/thaw_app.ts";
import { getRequest, postRequest } from "./http/users.ts";

// The apps of the HTTP benchmark, called without a server.
Deno.bench("GET /users/{id}: bare Hono", { group: "get", baseline: true }, async () => {
  await (await hono(getRequest())).text();
});
Deno.bench("GET /users/{id}: Thaw", { group: "get" }, async () => {
  await (await thaw.fetch(getRequest())).text();
});
Deno.bench("POST /users: bare Hono", { group: "post", baseline: true }, async () => {
  await (await hono(postRequest())).text();
});
Deno.bench("POST /users: Thaw", { group: "post" }, async () => {
  await (await thaw.fetch(postRequest())).text();
});

// The "with middleware" pair: `cors()` and `secureHeaders()` on both, Hono's `app.use` the baseline.
const honoWith = honoFetch(true);
const thawWith = await thawApp(true);
Deno.bench("GET /users/{id}: Hono + cors + secureHeaders", {
  group: "get, with middleware",
  baseline: true,
}, async () => {
  await (await honoWith(getRequest())).text();
});
Deno.bench(
  "GET /users/{id}: Thaw + cors + secureHeaders",
  { group: "get, with middleware" },
  async () => {
    await (await thawWith.fetch(getRequest())).text();
  },
);
Deno.bench("POST /users: Hono + cors + secureHeaders", {
  group: "post, with middleware",
  baseline: true,
}, async () => {
  await (await honoWith(postRequest())).text();
});
Deno.bench(
  "POST /users: Thaw + cors + secureHeaders",
  { group: "post, with middleware" },
  async () => {
    await (await thawWith.fetch(postRequest())).text();
  },
);
