// `search()`: the search connections of the configuration as beans of the official OpenSearch
// client, migrated first when the app asks. Set up before the beans are made, so that the clients
// are beans like any other: created before the beans that use them, and closed after them.
import { checkOptionsObject } from "../options_object.ts";
import process from "node:process";
import { ConfigError } from "../config/config_error.ts";
import { runtimeEnv } from "../config/env.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { SetupHost } from "../feature_value.ts";
import {
  connectionAuth,
  type SearchConnection,
  searchConnections,
} from "../migrate/search/search_connection.ts";
import { secretsMask } from "../config/secrets_mask.ts";
import { optionalApi, type OtelApi } from "../actuator/opentelemetry.ts";
import { authSecrets } from "../migrate/search/auth/authorize.ts";
import { openClient } from "./open_client.ts";
import { offerSearchHealth } from "./search_health.ts";
import { observeSearchClient } from "./search_telemetry.ts";
import { SearchClient } from "./search_client.ts";
import { type SearchFeature, searchFeature } from "./search_feature.ts";

/** What `search()` takes. */
export interface SearchOptions {
  /**
   * The search migrations root (one folder per connection, as `npx thaw -m search --searchPath`
   * takes it; a path relative to the working directory, or a file URL): the migrations of every
   * connection with `migrations.enabled: true` run before any bean is made, and a failure stops
   * `bootstrap` with the runner's error, which names the connection and the file. Nothing runs
   * without it.
   */
  readonly migrate?: string | URL | undefined;
  /**
   * With `migrate`: also compare the templates, policies, indices and aliases of the applied
   * files with each cluster, and apply again the files whose resources drifted, as `migrate
   * --drift` does (the progress lines and the error say what drifted).
   */
  readonly drift?: boolean | undefined;
  /**
   * Receives each line the migration runner prints while it runs (`main [1/2] apply
   * V1__products.json (applied, 12 ms)`), as `migrate({ onProgress })` does; nothing is printed
   * without it.
   */
  readonly onProgress?: ((line: string) => void) | undefined;
}

const OPTION_NAMES = ["migrate", "drift", "onProgress"];

/**
 * Search connections for `bootstrap({ search: search() })`: each `search:` entry of the
 * configuration becomes a {@linkcode SearchClient} bean (the official OpenSearch client) named
 * after it, the primary one (the only one, or the one with `primary: true`) found by class too.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/search.md
 */
export function search(options: SearchOptions = {}): SearchFeature {
  checkOptionsObject(options as unknown, "search(options)", OPTION_NAMES);
  const { migrate, drift, onProgress } = options;
  if (migrate !== undefined && typeof migrate !== "string" && !(migrate instanceof URL)) {
    throw new TypeError("search({ migrate }): give the migrations root, a path or a file URL");
  }
  if (drift !== undefined && typeof drift !== "boolean") {
    throw new TypeError("search({ drift }): give true or false");
  }
  if (drift === true && migrate === undefined) {
    throw new TypeError("search({ drift }): drift applies to migrate: give migrate too");
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new TypeError("search({ onProgress }): give a function, which takes each line");
  }
  return searchFeature((settings, host) =>
    setUp(settings, host, { migrate, drift: drift === true, onProgress })
  );
}

interface Wanted {
  readonly migrate: string | URL | undefined;
  readonly drift: boolean;
  readonly onProgress: ((line: string) => void) | undefined;
}

async function setUp(
  settings: ThawSettings,
  { config, context }: SetupHost,
  wanted: Wanted,
): Promise<FeatureFactory> {
  // `opensearch:` is the runner's other name for the list.
  const key = ["search", "opensearch"].find((k) => config.values[k] !== undefined);
  if (key === undefined) {
    throw new ConfigError(
      `search() makes each search connection a bean, and ${
        config.source ?? "the configuration"
      } has none: add a search: list (- name: main, hosts: http://127.0.0.1:9200)`,
    );
  }
  const list = searchConnections(config, key, runtimeEnv());
  const primary = primaryOf(list, settings, key);
  if (wanted.migrate !== undefined) {
    // Loaded only by an app that migrates at start, and with the search driver alone.
    const [{ migrateWith }, { searchDriver }] = await Promise.all([
      import("../migrate/at_start.ts"),
      import("../migrate/search/search_driver.ts"),
    ]);
    await migrateWith(searchDriver(), list, wanted.migrate, process.cwd(), {
      drift: wanted.drift,
      onProgress: wanted.onProgress,
    });
  }
  const operations: Operations = {
    // Offered by each client, served only by an actuator whose management.health.search.enabled
    // is not false (builtin_health.ts).
    healthTimeoutMs: settings.get("management.health.timeout"),
    // Where OpenTelemetry's API is installed: without it no app can have registered a provider.
    api: await optionalApi(),
  };
  for (const connection of list) {
    registerConnection(context, connection, connection === primary, operations);
  }
  return () => undefined;
}

/** What each connection's client is watched with: its health part, its telemetry. */
interface Operations {
  /** `management.health.timeout`. */
  readonly healthTimeoutMs: number;
  readonly api: OtelApi | undefined;
}

/**
 * Everything one connection brings to the app, in one place: its client as a bean named after
 * it (found by class too when it is the primary one), which the container closes after the beans
 * that use it, with its part of the `search` health component and its spans and metrics.
 */
function registerConnection(
  context: ApplicationContext,
  connection: SearchConnection,
  primary: boolean,
  { healthTimeoutMs, api }: Operations,
): void {
  context.registerBean({
    name: connection.name,
    type: SearchClient,
    source: `search connection ${connection.name}`,
    primary,
    // No request at creation: a cluster that is down when the app starts fails the calls made to
    // it, not the start.
    create: async () => {
      // The connection's secrets, masked alike in its client's errors and its health's reasons.
      const secrets = secretsMask(authSecrets(connectionAuth(connection)), { json: true });
      const client = await openClient(connection, secrets);
      offerSearchHealth(client, connection.name, healthTimeoutMs, secrets);
      if (api !== undefined) observeSearchClient(client, connection.name, api);
      return client;
    },
  });
}

// The one @Autowired(SearchClient) gets: the only connection, or the one marked primary.
function primaryOf(
  list: readonly SearchConnection[],
  settings: ThawSettings,
  key: string,
): SearchConnection {
  if (list.length === 1) return list[0];
  const marked = list.filter((c) => c.primary === true);
  if (marked.length === 1) return marked[0];
  const names = (of: readonly SearchConnection[]) => of.map((c) => `"${c.name}"`).join(", ");
  throw new ConfigError(
    `${settings.where(key)}: ${
      list.length === 0
        ? "the list is empty: search() needs a connection"
        : marked.length === 0
        ? `${names(list)}: none is primary: true, so @Autowired(SearchClient) would not know ` +
          "which to inject; mark one"
        : `${names(marked)} are all primary: true; mark one`
    }`,
  );
}
