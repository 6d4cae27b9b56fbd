// Serves one of the benchmark's apps on the runtime running this file, the way a user of that
// runtime serves a fetch handler, and prints `ready` once it takes connections:
//   deno run --allow-net --allow-read --allow-env bench/http/serve.ts thaw|hono|checked|careful|bare <port>
//                                                                     [--middleware]
//   bun bench/http/serve.ts …        node --import tsx bench/http/serve.ts …
// Each app is served as its users serve it: Thaw with `listen(app)`, Hono with `Deno.serve`,
// `Bun.serve` or @hono/node-server. On Deno and Bun both come down to the same call, so their
// difference is the framework's alone; on Node it includes Thaw's own listener. `--middleware`
// (Thaw and Hono only) runs `cors()` and `secureHeaders()` around every request (middleware.ts).
import process from "node:process";

type Fetch = (request: Request) => Response | Promise<Response>;
interface DenoServe {
  serve(options: { port: number; hostname: string; onListen(): void }, handler: Fetch): unknown;
}
interface BunServe {
  serve(options: { port: number; hostname: string; fetch: Fetch }): unknown;
}

const [app, portText, flag] = process.argv.slice(2);
const port = Number(portText);
const middleware = flag === "--middleware";
if (
  !["thaw", "hono", "checked", "careful", "bare"].includes(app) || !Number.isInteger(port) ||
  (flag !== undefined && !middleware) || (middleware && app !== "thaw" && app !== "hono")
) {
  console.error(
    "usage: serve.ts thaw|hono|checked|careful|bare <port>, or serve.ts thaw|hono <port> " +
      "--middleware",
  );
  process.exit(2);
}
const hostname = "127.0.0.1";
const g = globalThis as { Deno?: DenoServe; Bun?: BunServe };

if (app === "thaw") {
  // As a Thaw user serves: Deno.serve and Bun.serve as below; on Node, node:http with Hono's
  // adapter and bodies read before the handler (src/runtime/node_listener.ts).
  const [{ thawApp }, { listen }] = await Promise.all([
    import("./thaw_app.ts"),
    import("../../server.ts"),
  ]);
  await listen(await thawApp(middleware), { port, hostname });
  console.log("ready");
} else if (app === "checked") {
  // Served as listen(app) serves Thaw, so that the two differ by the controller layer alone.
  const [{ fetch }, { serve }, { DEFAULT_MAX_BODY_SIZE }] = await Promise.all([
    import("./checked_app.ts"),
    import("../../src/runtime/serve.ts"),
    import("../../src/http/http_request.ts"),
  ]);
  await serve(fetch, {
    port,
    hostname,
    maxBodySize: DEFAULT_MAX_BODY_SIZE,
    refuse: (status) => new Response(null, { status }),
    signals: true,
    shutdownTimeoutMs: 30_000,
    logger: console,
  });
  console.log("ready");
} else if (app === "bare" && g.Deno === undefined && g.Bun === undefined) {
  const { bareNodeServer } = await import("./bare_node.ts");
  bareNodeServer().listen(port, hostname, () => console.log("ready"));
} else {
  const fetch: Fetch = app === "bare"
    ? (await import("./bare_fetch.ts")).fetch
    : app === "careful"
    ? (await import("./careful_app.ts")).fetch
    : (await import("./hono_app.ts")).honoFetch(middleware);
  if (g.Deno !== undefined) {
    g.Deno.serve({ port, hostname, onListen: () => console.log("ready") }, fetch);
  } else if (g.Bun !== undefined) {
    g.Bun.serve({ port, hostname, fetch });
    console.log("ready");
  } else {
    const { serve } = await import("@hono/node-server");
    serve({ fetch, port, hostname }, () => console.log("ready"));
  }
}
