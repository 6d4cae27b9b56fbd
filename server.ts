/**
 * The server: `listen(app, options)` serves an application on Deno, Bun or Node, with graceful
 * shutdown on SIGTERM and SIGINT. Apart from the default entry point because an edge runtime
 * serves `app.fetch` itself (`export default app`) and has no use for Node's `http`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, GetMapping, RestController } from "@thaw/thaw";
 * import { listen } from "@thaw/thaw/server";
 *
 * @RestController()
 * class PingController {
 *   @GetMapping("/ping")
 *   ping(): string {
 *     return "pong";
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [PingController] });
 * const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
 * assert.equal(await (await fetch(`${server.url}/ping`)).text(), "pong");
 * await server.close();
 * ```
 *
 * @module
 */
export { listen } from "./src/runtime/listen.ts";
export type { ListenOptions, Server } from "./src/runtime/serve.ts";
