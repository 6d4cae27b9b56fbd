// `data()`: the datasources of the configuration as SqlClient beans, migrated first when the app
// asks. Set up before the beans are made, so that the clients are beans like any other: created
// before the beans that use them, and closed after them.
import process from "node:process";
import { ConfigError } from "../config/config_error.ts";
import { checkOptionsObject } from "../options_object.ts";
import { PreDestroy } from "../context/lifecycle.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import { optionalApi } from "../actuator/opentelemetry.ts";
import { DefinitionError } from "../context/errors.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { SetupHost } from "../feature_value.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { type Datasource, datasources } from "../sql/datasource.ts";
import type { DataPool } from "../sql/data_pool.ts";
import type { DataTelemetry } from "./data_telemetry.ts";
import { type DataFeature, dataFeature } from "./data_feature.ts";
import { openPool } from "../sql/open_pool.ts";
import { SqlClient } from "./sql_client.ts";
import { transactionalMethods } from "./transactional.ts";
import { checkIsolation, DIALECTS } from "../sql/dialects.ts";

/** What `data()` takes. */
export interface DataOptions {
  /**
   * The migrations root (one folder per datasource, as `npx thaw --migrations` takes it; a path
   * relative to the working directory, or a file URL): the migrations of every datasource with
   * `migrations.enabled: true` run before any bean is made, and a failure stops `bootstrap` with
   * the runner's error. Nothing runs without it.
   */
  readonly migrate?: string | URL | undefined;
  /**
   * Receives each line the migration runner prints while it runs (`users [1/2] apply
   * 001-create-users.sql (applied, 1 ms)`), as `migrate({ onProgress })` does; nothing is printed
   * without it.
   */
  readonly onProgress?: ((line: string) => void) | undefined;
}

/**
 * Data access for `bootstrap({ data: data() })`: each `datasource:` entry of the configuration
 * becomes a `SqlClient` bean named after it, the primary one (the only one, or the one with
 * `primary: true`) found by class too; `@Transactional` runs in their transactions.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/data.md
 */
export function data(options: DataOptions = {}): DataFeature {
  checkOptionsObject(options as unknown, "data(options)", ["migrate", "onProgress"]);
  const { migrate, onProgress } = options;
  if (migrate !== undefined && typeof migrate !== "string" && !(migrate instanceof URL)) {
    throw new TypeError("data({ migrate }): give the migrations root, a path or a file URL");
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new TypeError("data({ onProgress }): give a function, which takes each line");
  }
  return dataFeature((settings, host) => setUp(settings, host, migrate, onProgress));
}

async function setUp(
  settings: ThawSettings,
  { config, context }: SetupHost,
  migrate: string | URL | undefined,
  onProgress: ((line: string) => void) | undefined,
): Promise<FeatureFactory> {
  const cwd = process.cwd();
  if (config.values.datasource === undefined) {
    throw new ConfigError(
      `data() makes each datasource a bean, and ${config.source ?? "the configuration"} has ` +
        "none: add a datasource: list (- name: main, url: sqlite:./data/app.db)",
    );
  }
  const list = datasources(config, "datasource", cwd);
  const primary = primaryOf(list, settings);
  if (migrate !== undefined) {
    // The runner opens a connection of its own: a :memory: database of its own, which the app's
    // pool would never see.
    const memory = list.find((d) => d.migrationsEnabled && d.location === ":memory:");
    if (memory !== undefined) {
      throw new ConfigError(
        `${memory.source}: data({ migrate }) would migrate an in-memory database of its own, ` +
          `not the one datasource "${memory.name}" gives the app: give a file (sqlite:./data/app.db)`,
      );
    }
    const { migrateAtStart } = await import("../migrate_at_start.ts");
    await migrateAtStart(list, migrate, cwd, onProgress);
  }
  const telemetry = await dataTelemetry();
  for (const datasource of list) {
    context.registerBean({
      name: datasource.name,
      type: SqlClient,
      source: datasource.source ?? `datasource ${datasource.name}`,
      primary: datasource === primary,
      create: async () => {
        const pool = await openPool(datasource, datasource.pool ?? {});
        return new PooledSqlClient(telemetry?.observe(pool, datasource) ?? pool);
      },
    });
  }
  // Unset, not false, in an app without the actuator (whose key it is): an indicator nobody serves.
  if (settings.get("management.health.db.enabled") !== false) {
    context.register(databaseHealth(context, list));
  }
  return (host) => {
    checkTransactional(host.context.beans(), list, primary);
    return undefined;
  };
}

// Spans and metrics where OpenTelemetry's API is installed: without it no app can have registered
// a provider to report to, and the pools go bare.
async function dataTelemetry(): Promise<DataTelemetry | undefined> {
  const api = await optionalApi();
  if (api === undefined) return undefined;
  const { DataTelemetry } = await import("./data_telemetry.ts");
  return new DataTelemetry(api);
}

// The one @Autowired(SqlClient) gets: the only datasource, or the one marked primary.
function primaryOf(list: readonly Datasource[], settings: ThawSettings): Datasource {
  if (list.length === 1) return list[0];
  const marked = list.filter((d) => d.primary === true);
  if (marked.length === 1) return marked[0];
  const names = (of: readonly Datasource[]) => of.map((d) => `"${d.name}"`).join(", ");
  throw new ConfigError(
    `${settings.where("datasource")}: ${
      list.length === 0
        ? "the list is empty: data() needs a datasource"
        : marked.length === 0
        ? `${names(list)}: none is primary: true, so @Autowired(SqlClient) would not know which ` +
          "to inject; mark one"
        : `${names(marked)} are all primary: true; mark one`
    }`,
  );
}

// A @Transactional naming a datasource the configuration lacks, or an isolation level its
// database lacks, stops bootstrap, naming it.
function checkTransactional(
  beans: readonly { readonly instance: unknown }[],
  list: readonly Datasource[],
  primary: Datasource,
): void {
  const names = new Set(list.map((d) => d.name));
  for (const { instance } of beans) {
    for (const { where, options } of transactionalMethods(instance)) {
      const datasource = options.datasource === undefined
        ? primary
        : list.find((d) => d.name === options.datasource);
      if (datasource !== undefined) {
        try {
          checkIsolation(datasource, options.isolation, `${where}: @Transactional`);
        } catch (error) {
          throw new DefinitionError((error as Error).message);
        }
        continue;
      }
      throw new DefinitionError(
        `${where}: @Transactional({ datasource: "${options.datasource}" }) names no datasource ` +
          `of the configuration (${[...names].map((n) => `"${n}"`).join(", ")})`,
      );
    }
  }
}

/**
 * The health component `db`, of the bean `dbHealthIndicator` (Spring Boot's names: an app's own
 * class of that name clashes with it): UP while every datasource answers `SELECT 1`, with each
 * one's database; DOWN with the first failure's DataError, which names its datasource. Served
 * only by an app with the actuator, within `management.health.timeout`.
 */
function databaseHealth(
  context: ApplicationContext,
  list: readonly Datasource[],
): new () => HealthCheck {
  @HealthIndicator("db")
  class DbHealthIndicator implements HealthCheck {
    // Looked up at the first check, not at every probe; the beans live as long as the app.
    #clients: readonly SqlClient[] | undefined;

    async check(): Promise<Record<string, unknown>> {
      const clients = this.#clients ??= list.map(({ name }) => context.getBean<SqlClient>(name));
      const details: Record<string, unknown> = {};
      for (const client of clients) {
        // A DataError names the datasource and why, never a password.
        await client.unsafe("SELECT 1");
        details[client.name] = { database: DIALECTS[client.kind].name };
      }
      return details;
    }
  }
  return DbHealthIndicator;
}

/** A datasource's client as a bean: it owns its pool, closed after the beans that use it. */
class PooledSqlClient extends SqlClient {
  readonly #owned: DataPool;

  constructor(pool: DataPool) {
    super(pool);
    this.#owned = pool;
  }

  /** Closes the pool once the connections held are given back: the container calls it. */
  @PreDestroy()
  async close(): Promise<void> {
    await this.#owned.close();
  }
}
