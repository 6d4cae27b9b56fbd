import type { Application } from "../application.ts";
import { checkOptionsObject } from "../options_object.ts";
import { type ApplicationInternals, internalsOf } from "../application_internals.ts";
import { ConfigError } from "../config/config_error.ts";
import { checkLateKeys } from "../config/application_config.ts";
import { type ListenOptions, serve, type Server } from "./serve.ts";
import { checkUploadFolder } from "./upload_folder.ts";
import { clientSource } from "../observe/client_source.ts";
import { clientAddress } from "./client_address.ts";

const LISTEN_KEYS = ["port", "hostname", "signals", "quiet"];

/**
 * Serves an application on the runtime it runs on (Deno's HTTP server, `Bun.serve`, or Node's
 * `http`), on `server.port` and `server.hostname` of its configuration unless `options` say
 * otherwise (8080 and `0.0.0.0` by default), and starts the app's `@Scheduled` jobs once it serves.
 * SIGTERM and SIGINT shut it down gracefully: readiness turns DOWN and no job starts, it serves
 * on for `server.shutdown-delay`, the requests in flight finish within `server.shutdown-timeout`,
 * the app's `close()` waits for a job's run and runs its `@PreDestroy` hooks, and the process
 * exits. Edge runtimes serve `app.fetch` themselves (`export default app`) and need none of this.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/operations.md#listen
 */
export async function listen(app: Application, options: ListenOptions = {}): Promise<Server> {
  const internals = internalsOf(app, "listen(app)");
  checkOptionsObject(options as unknown, "listen(app, options)", LISTEN_KEYS, {
    hint: "listen(app, { port: 8080 })",
  });
  // The access log's client address: the socket this server hands each request on.
  clientSource.address = clientAddress;
  // An app bootstrapped before this module declared the key read none: a variable that sets it
  // would go unheard.
  if (internals.settings.get("server.forward-headers-strategy") === undefined) {
    checkLateKeys(internals.settings.config, "server.forward-headers-strategy");
  }
  const port = options.port ?? internals.defaultPort;
  const hostname = options.hostname ?? internals.defaultHostname;
  if (internals.uploads !== undefined) {
    await checkUploadFolder(internals.uploads.folder, internals.uploads.where);
  }
  const management = internals.management === undefined
    ? undefined
    : await serveManagement(internals.management, internals, port, hostname);
  let server: Server;
  let stopping: number | undefined;
  try {
    server = await serve(app.fetch, {
      ...internals.serve,
      port,
      hostname,
      websocket: internals.websocket,
      signals: options.signals ?? true,
      shutdownStarting: () => {
        stopping ??= performance.now();
        internals.serve.shutdownStarting?.();
      },
      // Probes keep their answers while the requests in flight finish (readiness DOWN), then the
      // management server goes too, before the beans stop.
      closed: async () => {
        try {
          await management?.close();
        } finally {
          await internals.serve.closed?.();
          // The start line's pair, once the beans are stopped: a log then says the app ended as
          // it should, and how long the shutdown took.
          if (options.quiet !== true) info(internals, stopLine(boundAddress(server), stopping));
        }
      },
    });
  } catch (error) {
    await management?.close();
    throw error;
  }
  // The app serves: its schedules start, never before (bootstrap alone starts nothing).
  app.start();
  if (management !== undefined) {
    const { hostname, port, url } = management;
    server = Object.freeze({ ...server, management: { hostname, port, url } });
  }
  if (options.quiet !== true) {
    info(
      internals,
      startLine(
        boundAddress(server),
        internals.started,
        undefined,
        management === undefined ? undefined : boundAddress(management),
      ),
    );
  }
  return server;
}

// A method call: a logger's `info` may need its `this` (pino, winston). A logger that throws is
// ignored, as on the error path: the server is up (or down), whatever the log sink says.
function info(internals: ApplicationInternals, line: string): void {
  try {
    internals.serve.logger.info?.(line);
  } catch {
    // nothing to report it to
  }
}

/**
 * Where a server listens, as its start and stop lines say it: the address it is bound to, not the
 * `localhost` of its `url`, so that a server open to every interface does not read as one open
 * to this machine alone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boundAddress } from "./listen.ts";
 *
 * assert.equal(
 *   boundAddress({ hostname: "0.0.0.0", port: 8080 }),
 *   "http://0.0.0.0:8080 (every IPv4 interface)",
 * );
 * assert.equal(boundAddress({ hostname: "::", port: 80 }), "http://[::]:80 (every interface)");
 * assert.equal(boundAddress({ hostname: "127.0.0.1", port: 8081 }), "http://127.0.0.1:8081");
 * ```
 */
export function boundAddress(server: { readonly hostname: string; readonly port: number }): string {
  const { hostname, port } = server;
  const url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  if (hostname === "0.0.0.0") return `${url} (every IPv4 interface)`;
  // Node, Deno and Bun bind `::` for IPv4 too, where the system allows it (Linux's default).
  if (hostname === "::") return `${url} (every interface)`;
  return url;
}

/** The line `listen` ends with: where it listened, and how long the shutdown took. */
export function stopLine(url: string, since: number | undefined): string {
  return `Thaw stopped listening on ${url}` +
    (since === undefined ? "" : `, shut down in ${Math.round(performance.now() - since)} ms`);
}

// The actuator's server, on `management.server.port`: no signals of its own (the main server's
// shutdown closes it), and nothing to run once closed.
async function serveManagement(
  management: NonNullable<ApplicationInternals["management"]>,
  internals: ApplicationInternals,
  mainPort: number,
  mainHostname: string,
): Promise<Server> {
  if (management.port !== 0 && management.port === mainPort) {
    throw new ConfigError(
      `${management.where}: ${management.port} is the port the app listens on; leave the key ` +
        "out to serve the actuator there, or give it a port of its own",
    );
  }
  return await serve(management.fetch, {
    ...internals.serve,
    port: management.port,
    hostname: management.hostname ?? mainHostname,
    signals: false,
    // Closed once the app's requests have had their time: what runs on it then is cut, so that
    // a shutdown takes server.shutdown-timeout once, not twice.
    shutdownTimeoutMs: 0,
    shutdownDelayMs: 0,
    shutdownStarting: undefined,
    closed: undefined,
  });
}

/**
 * The line `listen` starts with: where (and where the actuator's own port is, when it has one),
 * what, how long since `bootstrap` began, and the active profiles, when there are any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startLine } from "./listen.ts";
 *
 * assert.equal(
 *   startLine("http://localhost:8080", { at: 0, controllers: 1, routes: 12 }, 23.4),
 *   "Thaw listening on http://localhost:8080 — 1 controller, 12 routes, started in 23 ms",
 * );
 * assert.equal(
 *   startLine("http://[::1]:80", { at: 0, controllers: 2, routes: 1, profiles: ["prod", "eu"] }, 9),
 *   "Thaw listening on http://[::1]:80 — 2 controllers, 1 route, started in 9 ms, profiles prod, eu",
 * );
 * assert.equal(
 *   startLine("http://localhost:8080", { at: 0, controllers: 1, routes: 3 }, 5, "http://127.0.0.1:8081"),
 *   "Thaw listening on http://localhost:8080 (actuator on http://127.0.0.1:8081) — 1 controller, 3 routes, started in 5 ms",
 * );
 * ```
 */
export function startLine(
  url: string,
  started: {
    readonly at: number;
    readonly controllers: number;
    readonly routes: number;
    readonly profiles?: readonly string[];
  },
  now: number = performance.now(),
  management?: string,
): string {
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  const profiles = started.profiles ?? [];
  const where = management === undefined ? url : `${url} (actuator on ${management})`;
  return `Thaw listening on ${where} — ${count(started.controllers, "controller")}, ` +
    `${count(started.routes, "route")}, started in ${Math.round(now - started.at)} ms` +
    (profiles.length === 0 ? "" : `, profiles ${profiles.join(", ")}`);
}
