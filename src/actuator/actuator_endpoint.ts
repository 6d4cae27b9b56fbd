// What an actuator endpoint is: an id, its routes on the host the actuator gives it, why it cannot
// be served there, and its step of the app's close. The actuator serves a table of them, Thaw's own
// and the app's `@Endpoint` beans alike, so that one more is one more entry.
import type { LoadedConfig } from "../config/application_config.ts";
import type { Mask } from "../config/secrets_mask.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { ApplicationContext, BeanEntry } from "../context/application_context.ts";
import type { DocumentedRoute } from "../openapi/documented_route.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { Logger } from "../web/error_responder.ts";
import type { DiskSpace } from "./builtin_health.ts";
import type { HealthOptions } from "./health_settings.ts";
import type { RequestTelemetry } from "./request_telemetry.ts";

/** What an endpoint reads of the app it is served in, once the beans are made. */
export interface EndpointHost {
  /** `management.endpoints.web.base-path`, without a trailing `/`. */
  readonly base: string;
  readonly settings: ThawSettings;
  readonly config: LoadedConfig;
  readonly context: ApplicationContext;
  readonly logger: Logger;
  /** The app's beans as they are now. */
  readonly beans: () => readonly BeanEntry[];
  /** Every route the app serves, as `mappings` lists them (known once they are all made). */
  readonly routes: () => readonly CompiledRoute[];
  /** `bootstrap({ middleware })`, by name. */
  readonly globalMiddleware: readonly string[];
  /** Whether the app takes traffic: false once shutdown starts. */
  readonly accepting: () => boolean;
  /** What an error's message may carry of the configuration's secrets, or of a URL's. */
  readonly mask: Mask;
  /** The request telemetry, and the Prometheus scrape where it can be served. */
  readonly telemetry: RequestTelemetry;
  /** `actuator({ health })`. */
  readonly health?: HealthOptions | undefined;
  /** `actuator({ migrations })`. */
  readonly migrations?: (() => Promise<object>) | undefined;
  /** The disk's health, where `health` is exposed and the runtime has a disk. */
  readonly disk?: DiskSpace | undefined;
}

/** An endpoint's routes, how the OpenAPI document describes them, and its step of the close. */
export interface EndpointRoutes {
  readonly routes: readonly CompiledRoute[];
  readonly documented?: readonly DocumentedRoute[];
  /** Once the app's listeners have stopped: what the endpoint observes stops. */
  readonly close?: () => void;
}

/** One endpoint of the actuator, at `{base}/{id}`. */
export interface ActuatorEndpoint<I extends string = string> {
  /** Its id, as `management.endpoints.web.exposure.include` names it: `health`, `features`. */
  readonly id: I;
  /** Where it comes from, for messages: the app's bean, Thaw's own when absent. */
  readonly source?: string;
  /**
   * Why it cannot be served on this host, or `undefined`: `include`'s `*` then leaves it out,
   * and `include` naming it stops `bootstrap` with this text after the key's place.
   */
  readonly unavailable?: (host: EndpointHost) => string | undefined;
  /** Its routes under `host.base`, and its close step, made once it is exposed and available. */
  readonly routes: (host: EndpointHost) => EndpointRoutes;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

/** A JSON answer of an endpoint: never cached, since it says how things are now. */
export function jsonAnswer(body: string, status = 200): Response {
  return new Response(body, { status, headers: JSON_HEADERS });
}

/**
 * What an endpoint's `unavailable` checked is there: its routes are asked for only once that
 * said nothing, so a missing one is Thaw's bug, named here rather than met as `undefined` later.
 */
export function available<T>(value: T | undefined, id: string, what: string): T {
  if (value === undefined) throw new Error(`the ${id} endpoint's routes were made without ${what}`);
  return value;
}
