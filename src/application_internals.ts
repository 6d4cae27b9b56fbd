// What the entry points beside the default one (the server, the OpenAPI generator) need of an
// application, kept off its public shape: `listen(app)` and `openApiDocument(app)` read it here.
import type { Class } from "./context/class.ts";
import type { ThawSettings } from "./config/thaw_settings.ts";
import type { MiddlewareEntry } from "./web/route_record.ts";
import type { DocumentedGuard, DocumentedRoute } from "./openapi/documented_route.ts";
import type { OpenApiDocument } from "./openapi/openapi_document.ts";
import type { CompiledRoute } from "./web/compile.ts";
import type { ServedSockets, ServeOptions } from "./runtime/serve.ts";

/**
 * A route as the OpenAPI document describes it: a controller's, compiled (the generator reads
 * what it needs of it), or one a feature documents itself (the health probes).
 */
export type RouteToDocument = CompiledRoute | DocumentedRoute;

/** An application's own settings and routes, as `bootstrap` resolved them. */
export interface ApplicationInternals {
  readonly settings: ThawSettings;
  readonly documented: readonly RouteToDocument[];
  /** Whether errors are answered by the default error controller. */
  readonly defaultErrorBody: boolean;
  /** `bootstrap({ middleware })`, and the beans of middleware classes: what guards the routes. */
  readonly middleware: readonly MiddlewareEntry[];
  readonly beanOf: (type: Class) => unknown;
  /** How the document describes the guard of every route (the security feature's). */
  readonly documentedGuard?: DocumentedGuard;
  /** The served OpenAPI document, when the app serves one. */
  readonly openapi?: () => Promise<OpenApiDocument>;
  /** What `listen` passes to the server, port and address aside. */
  readonly serve: Omit<ServeOptions, "port" | "hostname" | "signals">;
  readonly defaultPort: number;
  readonly defaultHostname: string;
  /**
   * The actuator's own app, where `management.server.port` gives it a port of its own: what
   * `listen` serves there, and where the key is, for messages.
   */
  readonly management?: {
    readonly fetch: (request: Request) => Response | Promise<Response>;
    readonly port: number;
    /** `management.server.address`; else the address `listen` binds the app's port on. */
    readonly hostname?: string;
    readonly where: string;
  };
  /**
   * `server.multipart.location`, when set, and where: the folder of upload files, which `listen`
   * checks before it serves.
   */
  readonly uploads?: { readonly folder: string; readonly where: string };
  /**
   * Where the app maps WebSockets: what `listen` has its server take upgrades with (Bun's
   * socket handler, Node's `ws` server, bounded to the largest message), and hands the
   * server's upgrade to.
   */
  readonly websocket?: ServedSockets;
  /** What the start line of `listen` says: when `bootstrap` began, and what it wired. */
  readonly started: {
    readonly at: number;
    readonly controllers: number;
    readonly routes: number;
    /** The active profiles. */
    readonly profiles: readonly string[];
  };
}

const registry = new WeakMap<object, ApplicationInternals>();

/** Records what `bootstrap` resolved for an application. */
export function registerApplication(app: object, internals: ApplicationInternals): void {
  registry.set(app, internals);
}

/** What `bootstrap` resolved for `app`; a `TypeError` naming `caller` for anything else. */
export function internalsOf(app: unknown, caller: string): ApplicationInternals {
  const internals = typeof app === "object" && app !== null ? registry.get(app) : undefined;
  if (internals === undefined) {
    // An app of another copy of the package (npm and JSR, two versions) has the same shape.
    const looksLikeOne = typeof app === "object" && app !== null && "getBean" in app &&
      "hono" in app;
    throw new TypeError(
      looksLikeOne
        ? `${caller} takes an application that bootstrap() of this copy of @thaw/thaw returned; ` +
          "this one comes from another copy (npm and JSR, or two versions): import every entry " +
          "point from one"
        : `${caller} takes an application that bootstrap() returned`,
    );
  }
  return internals;
}
