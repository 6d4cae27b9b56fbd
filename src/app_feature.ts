// The one seam between `bootstrap` and what an app may carry beside its controllers: the actuator,
// OpenAPI, the scheduler, the app's own events, the access log. Each is an `AppFeature`: what it
// serves, what it observes, and its steps of the app's life, each in a declared place. `bootstrap`
// folds them and knows none of them by name; a feature the app does not use is never loaded.
import type { ApplicationContext } from "./context/application_context.ts";
import type { Class } from "./context/class.ts";
import { metadataOfInstance } from "./context/class_record.ts";
import type { ThawSettings } from "./config/thaw_settings.ts";
import type { ApplicationInternals, RouteToDocument } from "./application_internals.ts";
import type { DocumentedGuard, DocumentedRoute } from "./openapi/documented_route.ts";
import type { RequestObserver } from "./observe/request_observer.ts";
import type { CompiledRoute, RouteGuard } from "./web/compile.ts";
import type { Logger } from "./web/error_responder.ts";
import type { EdgeHandlers } from "./edge_events.ts";
import type { MiddlewareEntry } from "./web/route_record.ts";

/**
 * When a feature's part of the app's close runs, in this order, before the beans stop:
 * `announce` while everything still runs (`ApplicationClosing`), `jobs` stops the work that uses
 * the beans (a scheduled run in progress ends), `listeners` waits for what still reacts to it
 * (async event listeners) and refuses more.
 */
export type ClosePhase = "announce" | "jobs" | "listeners";

/** A feature's step of the app's close: resolves to what went wrong, if anything. */
export type CloseStep = () => Promise<Error | undefined>;

/** What a feature adds to an app, and its steps of the app's life. */
export interface AppFeature {
  /** Routes it serves on the app's port, after the controllers'. */
  readonly routes?: readonly CompiledRoute[];
  /** How the OpenAPI document describes them. */
  readonly documented?: readonly DocumentedRoute[];
  /** What observes every request, outermost first. */
  readonly observers?: readonly RequestObserver[];
  /**
   * Runs first in each route's own chain, those of the features folded after it included, so
   * that it decides on the very route the router picked (the security feature's).
   */
  readonly guard?: RouteGuard;
  /** How the OpenAPI document describes that guard on each route: its schemes, the requirement. */
  readonly documentedGuard?: DocumentedGuard;
  /** What `listen` and the other entry points read of it: a port of its own, a document. */
  readonly internals?: Partial<
    Pick<ApplicationInternals, "management" | "openapi" | "websocket" | "documentedGuard">
  >;
  /**
   * Once the app is compiled, before it serves. A feature whose step fails undoes its own part;
   * `bootstrap` closes the features that are up (made, and started if they have this step), then
   * the beans.
   */
  readonly started?: () => Promise<void>;
  /** `app.start()` (which `listen` calls): the feature's own work begins. */
  readonly start?: () => void;
  /** An edge runtime's cron trigger, by its expression; rejects with what failed. */
  readonly cron?: (expression: string) => Promise<void>;
  /**
   * What it adds to the app's edge handlers, given the app's own: a `queue` consumer, or a
   * `fetch` and a `scheduled` that first read the bindings (`env`) the runtime passes.
   */
  readonly handlers?: (app: EdgeHandlers) => Partial<EdgeHandlers>;
  /** The server stops taking requests: no new work begins while those in flight finish. */
  readonly stopAccepting?: () => void;
  /**
   * Its steps of the app's close, each in its phase; within a phase the features' steps run one
   * after another, in the order the features were folded.
   */
  readonly close?: { readonly [P in ClosePhase]?: CloseStep };
}

/** What a feature may read of the app it joins, once the beans are made. */
export interface FeatureHost {
  readonly context: ApplicationContext;
  readonly settings: ThawSettings;
  readonly logger: Logger;
  /** `server.shutdown-timeout`, in milliseconds. */
  readonly shutdownTimeoutMs: number;
  /** The routes so far: the controllers', then those of the features folded before. */
  readonly routes: readonly CompiledRoute[];
  /** What the OpenAPI document describes of them. */
  readonly documented: readonly RouteToDocument[];
  /** `bootstrap({ middleware })`, which guards every route. */
  readonly middleware: readonly MiddlewareEntry[];
  /** The bean of a middleware class. */
  readonly beanOf: (type: Class) => unknown;
  /** Whether errors are answered by the default error controller. */
  readonly defaultErrorBody: boolean;
  /** How the document describes the guard of every route, once a feature gave one. */
  readonly documentedGuard?: DocumentedGuard | undefined;
  /** Whether the app takes traffic: false once shutdown starts. */
  readonly accepting: () => boolean;
  /** An app of its own for `routes`, with Thaw's error path and none of the app's middleware. */
  readonly serveApart: (
    routes: readonly CompiledRoute[],
  ) => (request: Request) => Response | Promise<Response>;
}

/** Makes a feature once the beans are made; `undefined` when there is nothing to add. */
export type FeatureFactory = (
  host: FeatureHost,
) => AppFeature | undefined | Promise<AppFeature | undefined>;

/** Where the decorators of a class leave the features they bring (`@Scheduled`, `@EventListener`). */
const BROUGHT: unique symbol = Symbol("thaw.features");

/**
 * Records, in the metadata of the class being decorated, that its decorator brings `feature`:
 * the decorator's module brings the feature's code, so an app without it carries none.
 */
export function bringFeature(metadata: DecoratorMetadataObject, feature: FeatureFactory): void {
  const record = metadata as Record<symbol, readonly FeatureFactory[] | undefined>;
  // Read through the superclass's metadata, written as the class's own: a subclass's decorators
  // never add to its superclass's list.
  const inherited = record[BROUGHT] ?? [];
  if (!inherited.includes(feature)) record[BROUGHT] = [...inherited, feature];
}

/** The features the decorators of the beans' classes brought, each once, in the order first met. */
export function broughtFeatures(
  beans: readonly { readonly instance: unknown }[],
): FeatureFactory[] {
  const found = new Set<FeatureFactory>();
  for (const { instance } of beans) {
    for (const feature of metadataOfInstance(instance)?.[BROUGHT] as FeatureFactory[] ?? []) {
      found.add(feature);
    }
  }
  return [...found];
}
