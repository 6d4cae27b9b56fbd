// The actuator's table of endpoints: Thaw's own, which of them and of the app's are exposed and
// where, and their routes with the index of links at the base path. Loaded by the actuator entry
// point only.
import type { ActuatorEndpoint, EndpointHost, EndpointRoutes } from "./actuator_endpoint.ts";
import { jsonAnswer } from "./actuator_endpoint.ts";
import { endpointRoute } from "./endpoint_route.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { ConfigError } from "../config/config_error.ts";
import { parsePathPattern } from "../web/path_pattern.ts";
import { cachesEndpoint } from "./endpoints/caches.ts";
import { configpropsEndpoint } from "./endpoints/configprops.ts";
import { envEndpoint } from "./endpoints/env.ts";
import { healthEndpoint } from "./endpoints/health.ts";
import { infoEndpoint } from "./endpoints/info.ts";
import { loggersEndpoint } from "./endpoints/loggers.ts";
import { mappingsEndpoint } from "./endpoints/mappings.ts";
import { migrationsEndpoint } from "./endpoints/migrations.ts";
import { prometheusEndpoint } from "./endpoints/prometheus.ts";
import { scheduledtasksEndpoint } from "./endpoints/scheduledtasks.ts";

export type { Mapping } from "./mappings.ts";

/** The endpoints the actuator serves itself, by Spring's ids. */
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

/** Thaw's own endpoints, in the order the index lists them. */
export const BUILT_IN: readonly ActuatorEndpoint<EndpointId>[] = [
  cachesEndpoint,
  configpropsEndpoint,
  envEndpoint,
  healthEndpoint,
  infoEndpoint,
  loggersEndpoint,
  mappingsEndpoint,
  migrationsEndpoint,
  prometheusEndpoint,
  scheduledtasksEndpoint,
];

/** Every endpoint of Thaw's, in the order the index lists them. */
export const ENDPOINTS: readonly EndpointId[] = BUILT_IN.map((e) => e.id);

/** Which endpoints are exposed, and under which path. */
export interface Exposure {
  /** `management.endpoints.web.base-path`, without a trailing `/`. */
  readonly base: string;
  /** The endpoints served. */
  readonly exposed: ReadonlySet<string>;
  /**
   * The endpoints `include` names, not by `*`: one of them that cannot be served stops
   * `bootstrap`, where `*` leaves it out (as Spring's `*` exposes the endpoints there are).
   */
  readonly named: ReadonlySet<string>;
  /** `management.endpoints.web.discovery.enabled`: the index of links at the base path. */
  readonly discovery: boolean;
}

/**
 * Reads `management.endpoints.web.exposure.include` and `.exclude` (ids, or `*` for all of
 * `known`) and `management.endpoints.web.base-path`: an id not `known` or a base path that is not
 * a fixed path stops `bootstrap`, naming the key. Before the beans are made, the app's own ids are
 * not known yet: with `known` left out, an id that is not Thaw's is kept, and `*` is Thaw's.
 */
export function exposure(settings: ThawSettings, known?: readonly string[]): Exposure {
  const all = known ?? ENDPOINTS;
  const named = new Set<string>();
  const ids = (key: "include" | "exclude"): Set<string> => {
    const full = `management.endpoints.web.exposure.${key}` as const;
    const out = new Set<string>();
    // Spring's ids are taken in any case, as its own relaxed binding takes them.
    const items = settings.get(full).flatMap((i) => i.split(",")).map((i) => i.trim());
    for (const item of items.map((i) => i.toLowerCase())) {
      if (item === "") continue;
      if (item === "*") all.forEach((id) => out.add(id));
      else if (all.includes(item) || known === undefined) {
        out.add(item);
        if (key === "include") named.add(item);
      } else {
        throw new ConfigError(
          `${settings.where(full)}: no endpoint ${JSON.stringify(item)}; the endpoints are ` +
            `${all.join(", ")} (or * for all)`,
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

/**
 * The routes of the endpoints of `table` that `exposure` exposes (each one `host` can serve: one
 * that it cannot, `include` naming it stops `bootstrap`, `*` leaves it out), and the index of
 * those served at `{base}`.
 */
export function endpointRoutes(
  table: readonly ActuatorEndpoint[],
  { exposed, named, discovery }: Exposure,
  host: EndpointHost,
): Required<EndpointRoutes> & { readonly served: readonly string[] } {
  const served = table.filter((endpoint) => {
    if (!exposed.has(endpoint.id)) return false;
    const why = endpoint.unavailable?.(host);
    if (why !== undefined && named.has(endpoint.id)) {
      throw new ConfigError(
        `${host.settings.where("management.endpoints.web.exposure.include")}: ${why}`,
      );
    }
    return why === undefined;
  });
  const made = served.map((endpoint) => endpoint.routes(host));
  const routes = made.flatMap((m) => m.routes);
  const { base } = host;
  if (served.length > 0 && discovery) {
    const templates = served.map((endpoint, i) => templatedLinks(endpoint.id, base, made[i]));
    // Spring's discovery page: a link to each endpoint served, as an absolute URL, and one to
    // each of its routes with path variables, templated.
    routes.push(endpointRoute("GET", base, (c) => {
      const root = new URL(base, c.req.url).href;
      const links: Record<string, { href: string; templated?: true }> = { self: { href: root } };
      served.forEach(({ id }, i) => {
        links[id] = { href: `${root}/${id}` };
        for (const [name, rest] of templates[i]) {
          links[name] = { href: root + rest, templated: true };
        }
      });
      return jsonAnswer(JSON.stringify({ _links: links }));
    }));
  }
  return {
    routes,
    documented: made.flatMap((m) => m.documented ?? []),
    close: () => made.forEach((m) => m.close?.()),
    served: served.map((e) => e.id),
  };
}

// An endpoint's routes with path variables, by Spring's link names (`loggers-name` for
// `/loggers/{name}`), each with its template after the base path; one link for the methods of
// one path.
function templatedLinks(id: string, base: string, made: EndpointRoutes): Map<string, string> {
  const links = new Map<string, string>();
  for (const { pattern } of made.routes) {
    if (pattern.variables.length === 0) continue;
    links.set(`${id}-${pattern.variables.join("-")}`, pattern.template.slice(base.length));
  }
  return links;
}
