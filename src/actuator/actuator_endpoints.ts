// The actuator's endpoints besides health: which are exposed and where, `info` and `mappings`.
// Loaded by the actuator entry point only.
import { endpointRoute } from "./endpoint_route.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { ConfigError } from "../config/config_error.ts";
import { composeMasks, maskUrls, secretsMask } from "../config/secrets_mask.ts";
import {
  configLocation,
  configSecrets,
  configValue,
  type LoadedConfig,
} from "../config/application_config.ts";
import { VERSION } from "../version.ts";
import type { CompiledRoute } from "../web/compile.ts";
import { parsePathPattern } from "../web/path_pattern.ts";
import {
  OPENMETRICS_CONTENT_TYPE,
  prefersOpenMetrics,
  PROMETHEUS_TEXT_CONTENT_TYPE,
  toOpenMetrics,
} from "./openmetrics.ts";
import { shownValueMask } from "./shown_values.ts";
import { isMapping } from "../object_guards.ts";
import type { ScheduledJobInfo } from "../scheduling/scheduled_job_info.ts";
import { cachesRoutes } from "./caches_endpoint.ts";
import { scheduledTasks } from "./scheduled_tasks.ts";
import { envRoutes } from "./env_endpoint.ts";
import { configpropsRoutes } from "./configprops_endpoint.ts";
import { showValues } from "./show_values.ts";
import { loggersRoutes } from "./loggers_endpoint.ts";
import type { LoggingSystem } from "../logging/logging_system.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";

/** The endpoints the actuator serves, by Spring's ids. */
export type EndpointId =
  | "caches"
  | "configprops"
  | "env"
  | "health"
  | "info"
  | "loggers"
  | "mappings"
  | "migrations"
  | "prometheus"
  | "scheduledtasks";

/** Every endpoint, in the order the index lists them. */
export const ENDPOINTS: readonly EndpointId[] = [
  "caches",
  "configprops",
  "env",
  "health",
  "info",
  "loggers",
  "mappings",
  "migrations",
  "prometheus",
  "scheduledtasks",
];

/** What the endpoints that read beyond the configuration read. */
export interface EndpointSources {
  /** The Prometheus exposition, where `prometheus` can be served. */
  readonly scrape?: (() => Promise<string>) | undefined;
  /** The migrations' status, where the app gave one. */
  readonly migrations?: (() => Promise<object>) | undefined;
  /** The app's beans as they are now, where `caches` finds the cache managers. */
  readonly beans?: (() => readonly { name: string; instance: unknown }[]) | undefined;
  /** The jobs of the app's scheduler as they are now (none without one). */
  readonly jobs?: (() => readonly ScheduledJobInfo[]) | undefined;
  /** Thaw's settings, as `configprops` lists them and `show-values` says to show them. */
  readonly settings?: ThawSettings | undefined;
  /** The app's `LoggingSystem` bean, which `loggers` reads and sets. */
  readonly loggingSystem?: LoggingSystem | undefined;
}

/** Which endpoints are exposed, and under which path. */
export interface Exposure {
  /** `management.endpoints.web.base-path`, without a trailing `/`. */
  readonly base: string;
  /** The endpoints served. */
  readonly exposed: ReadonlySet<EndpointId>;
  /**
   * The endpoints `include` names, not by `*`: one of them that cannot be served stops
   * `bootstrap`, where `*` leaves it out (as Spring's `*` exposes the endpoints there are).
   */
  readonly named: ReadonlySet<EndpointId>;
  /** `management.endpoints.web.discovery.enabled`: the index of links at the base path. */
  readonly discovery: boolean;
}

/**
 * Reads `management.endpoints.web.exposure.include` and `.exclude` (ids, or `*` for all) and
 * `management.endpoints.web.base-path`: an unknown id or a base path that is not a fixed path
 * stops `bootstrap`, naming the key.
 */
export function exposure(settings: ThawSettings): Exposure {
  const named = new Set<EndpointId>();
  const ids = (key: "include" | "exclude"): Set<EndpointId> => {
    const full = `management.endpoints.web.exposure.${key}` as const;
    const out = new Set<EndpointId>();
    // Spring's ids are taken in any case, as its own relaxed binding takes them.
    const items = settings.get(full).flatMap((i) => i.split(",")).map((i) => i.trim());
    for (const item of items.map((i) => i.toLowerCase())) {
      if (item === "") continue;
      if (item === "*") ENDPOINTS.forEach((id) => out.add(id));
      else if ((ENDPOINTS as readonly string[]).includes(item)) {
        out.add(item as EndpointId);
        if (key === "include") named.add(item as EndpointId);
      } else {
        throw new ConfigError(
          `${settings.where(full)}: no endpoint ${JSON.stringify(item)}; the endpoints are ` +
            `${ENDPOINTS.join(", ")} (or * for all)`,
        );
      }
    }
    return out;
  };
  const include = ids("include");
  const exclude = ids("exclude");
  const key = "management.endpoints.web.base-path";
  const raw = settings.get(key);
  const base = raw.length > 1 && raw.endsWith("/") ? raw.slice(0, -1) : raw;
  let fixed = false;
  try {
    fixed = /^\/\S*$/.test(base) && parsePathPattern(base).variables.length === 0;
  } catch {
    fixed = false;
  }
  if (!fixed || base === "/") {
    throw new ConfigError(
      `${settings.where(key)} must be a fixed path like /actuator, got ${JSON.stringify(raw)}`,
    );
  }
  return {
    base,
    exposed: new Set([...include].filter((id) => !exclude.has(id))),
    named,
    discovery: settings.get("management.endpoints.web.discovery.enabled"),
  };
}

function json(body: string): Response {
  return new Response(body, {
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

function runtime(): { name: string; version: string } {
  const g = globalThis as {
    Deno?: { version: { deno: string } };
    Bun?: { version: string };
    process?: { versions?: { node?: string } };
    navigator?: { userAgent?: string };
  };
  // Before `process`: workerd's says it is Node 22.
  if (onWorkerd()) return { name: "workerd", version: "" };
  if (g.Deno !== undefined) return { name: "deno", version: g.Deno.version.deno };
  if (g.Bun !== undefined) return { name: "bun", version: g.Bun.version };
  if (g.process?.versions?.node !== undefined) {
    return { name: "node", version: g.process.versions.node };
  }
  return { name: g.navigator?.userAgent ?? "unknown", version: "" };
}

/**
 * `GET {base}/info`: Thaw's version and the runtime, then the `info` section of the
 * configuration (Spring's `info.*`; its keys win), with every value under a key named like a
 * secret, and every secret the configuration holds, masked. A section that is no JSON (a BigInt,
 * a cycle, in a configuration object) stops `bootstrap`.
 */
export function infoBody(config: LoadedConfig): string {
  const section = configValue(config.values, "info");
  const info = isMapping(section) ? shownValueMask(config)(section) : {};
  try {
    return JSON.stringify({ thaw: { version: VERSION }, runtime: runtime(), ...(info as object) });
  } catch (error) {
    throw new ConfigError(
      `${configLocation(config, "info")}: the info section cannot be served as JSON: ` +
        (error as Error).message,
      { cause: error },
    );
  }
}

/** One route, as `mappings` lists it. */
export interface Mapping {
  /** The HTTP method: `GET`, `POST`... */
  readonly method: string;
  /** The path template: `/items/{id}`. */
  readonly path: string;
  /** `Class.method`, or `Thaw` for a route the framework serves itself. */
  readonly handler: string;
  /** The global middleware, then the controller's and the method's, by name. */
  readonly middleware: readonly string[];
  /** What request bodies it reads; empty when it reads none. */
  readonly consumes: readonly string[];
}

/** `GET {base}/mappings`: every route the app serves. */
export function mappings(
  routes: readonly CompiledRoute[],
  globalMiddleware: readonly string[],
): Mapping[] {
  return routes.map((route) => {
    const binders = route.method?.binders ?? [];
    const kinds = new Set(binders.map((b) => (b as { kind?: string }).kind));
    return {
      method: route.httpMethod,
      path: route.pattern.source,
      handler: route.method === undefined
        ? "Thaw"
        : `${route.method.type.name}.${route.method.methodName}`,
      middleware: [...globalMiddleware, ...(route.middlewareNames ?? [])],
      consumes: kinds.has("part")
        ? ["multipart/form-data"]
        : kinds.has("body")
        ? ["application/json"]
        : [],
    };
  });
}

/**
 * The routes of `caches`, `configprops`, `env`, `info`, `loggers`, `mappings`, `migrations`,
 * `prometheus` and `scheduledtasks` (given what they read) and the index of the exposed endpoints,
 * at `{base}`.
 */
export function endpointRoutes(
  { base, exposed, discovery }: Exposure,
  config: LoadedConfig,
  routes: () => readonly CompiledRoute[],
  globalMiddleware: readonly string[],
  { scrape, migrations, beans, jobs, settings, loggingSystem }: EndpointSources = {},
): CompiledRoute[] {
  const out: CompiledRoute[] = [];
  const add = (path: string, handler: CompiledRoute["handler"]) =>
    out.push(endpointRoute("GET", path, handler));
  if (exposed.has("info")) {
    const body = infoBody(config);
    add(`${base}/info`, () => json(body));
  }
  if (exposed.has("mappings")) {
    add(
      `${base}/mappings`,
      () => json(JSON.stringify({ routes: mappings(routes(), globalMiddleware) })),
    );
  }
  // What an error's message may carry of the configuration's secrets, or of a URL's.
  const mask = composeMasks(maskUrls, secretsMask(configSecrets(config)));
  if (exposed.has("caches") && beans !== undefined) out.push(...cachesRoutes(base, beans, mask));
  if (exposed.has("env") && settings !== undefined) {
    out.push(...envRoutes(base, config, showValues(settings, "env")));
  }
  if (exposed.has("configprops") && settings !== undefined) {
    const show = showValues(settings, "configprops");
    out.push(...configpropsRoutes(base, settings, beans ?? (() => []), show));
  }
  if (exposed.has("loggers") && loggingSystem !== undefined) {
    out.push(...loggersRoutes(base, loggingSystem));
  }
  if (exposed.has("migrations") && migrations !== undefined) {
    // Each connection's failure is in the body; what fails as a whole (no configuration to read)
    // is a 503 naming why, its secrets masked, never the error path's 500.
    add(`${base}/migrations`, async () => {
      try {
        return json(JSON.stringify(await migrations()));
      } catch (error) {
        return new Response(
          JSON.stringify({ error: mask(String((error as Error)?.message ?? error)) }),
          {
            status: 503,
            headers: { "content-type": "application/json", "cache-control": "no-store" },
          },
        );
      }
    });
  }
  if (exposed.has("prometheus") && scrape !== undefined) {
    // OpenMetrics for a scraper that asks for it first (Prometheus does), the text format else;
    // `Vary`, since one URL answers both.
    add(`${base}/prometheus`, async (c) => {
      const text = await scrape();
      // The text format where OpenMetrics cannot say all of it (names that clash).
      const open = prefersOpenMetrics(c.req.header("accept")) ? toOpenMetrics(text) : undefined;
      return new Response(open ?? text, {
        headers: {
          "content-type": open !== undefined
            ? OPENMETRICS_CONTENT_TYPE
            : PROMETHEUS_TEXT_CONTENT_TYPE,
          "cache-control": "no-store",
          vary: "Accept",
        },
      });
    });
  }
  if (exposed.has("scheduledtasks")) {
    add(
      `${base}/scheduledtasks`,
      () => json(JSON.stringify(scheduledTasks(jobs?.() ?? [], mask))),
    );
  }
  if (exposed.size > 0 && discovery) {
    // Spring's discovery page: a link to each endpoint served, as an absolute URL.
    add(base, (c) => {
      const href = (path: string) => ({ href: new URL(path, c.req.url).href });
      const links: Record<string, { href: string }> = { self: href(base) };
      for (const id of ENDPOINTS) if (exposed.has(id)) links[id] = href(`${base}/${id}`);
      return json(JSON.stringify({ _links: links }));
    });
  }
  return out;
}
