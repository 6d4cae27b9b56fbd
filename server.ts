/**
 * The server: `listen(app, options)` serves an application on Deno, Bun or Node, with graceful
 * shutdown on SIGTERM and SIGINT. Apart from the default entry point because an edge runtime
 * serves `app.fetch` itself (`export default app`) and has no use for Node's `http`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#thawthawserver
 *
 * @module
 */
export { listen } from "./src/runtime/listen.ts";
export type { ListenOptions, Server } from "./src/runtime/serve.ts";
