import type { MultipartLimits } from "./multipart.ts";

/**
 * What the server running the app parsed of a request before the app saw it. The body binding
 * reads headers and pre-read bytes through this interface, so it depends on no server adapter:
 * `listen(app)` on Node hands in Node's parsed request (src/runtime/node_incoming.ts), every other
 * server the web `Request` itself.
 */
export interface ServerRequest {
  /**
   * A request header: every field of that name, joined by `, ` as `Headers.get` joins them, or
   * `null`. `env` is the second argument the app's `fetch` was called with.
   */
  header(request: Request, env: unknown, name: string): string | null;
  /** The body's bytes when the server read them before the app ran, else `undefined`. */
  body(env: unknown): Uint8Array | undefined;
  /**
   * The limits a `multipart/form-data` body is read under (the `server.multipart.*` keys that
   * `bootstrap` read); their defaults when absent.
   */
  readonly multipart?: MultipartLimits;
}

/** A request as any fetch server hands it over: everything is read from the `Request`. */
export const webServerRequest: ServerRequest = {
  header: (request, _env, name) => request.headers.get(name),
  body: () => undefined,
};
