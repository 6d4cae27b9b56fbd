// `jobs()`: the `JobQueue` bean, kept in a table of a datasource (`jobs.datasource`, else the
// primary one), and once the beans are made, a worker for each `@JobHandler` queue, started with
// the app and closed before the beans stop.
import { optionalApi } from "../actuator/opentelemetry.ts";
import { durationKey } from "../config/duration.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { DefinitionError } from "../context/errors.ts";
import { SqlClient } from "../data/sql_client.ts";
import type { FeatureFactory } from "../app_feature.ts";
import type { SetupHost } from "../feature_value.ts";
import { foundHandlers } from "./job_handler.ts";
import { JobNotifications, type ListeningPool } from "./job_notifications.ts";
import { JobQueue } from "./job_queue.ts";
import { jobsHealth } from "./jobs_health.ts";
import { jobsEndpoint } from "./jobs_endpoint.ts";
import { JobWorker } from "./job_worker.ts";
import { JobWorkers } from "./job_workers.ts";
import { type JobsFeature, jobsFeature } from "./jobs_feature.ts";
import type { JobsTelemetry } from "./jobs_telemetry.ts";
import { SqlJobStore } from "./sql_job_store.ts";

/**
 * Durable background jobs, for `bootstrap({ jobs: jobs() })`: the `JobQueue` bean, and a worker
 * for each `@JobHandler` queue, from `app.start()` (which `listen` calls). The jobs are kept in
 * the table `jobsMigration()` makes, in the datasource `jobs.datasource` names (the primary one
 * by default). `app.close()` stops taking jobs, aborts the signals of the runs in progress and
 * waits up to `server.shutdown-timeout` for them; a job whose run did not finish is taken again.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/jobs.md
 */
export function jobs(): JobsFeature {
  return jobsFeature(setUp);
}

// `7d`: what a done job is kept unless `jobs.retention` says otherwise.
const DEFAULT_RETENTION_MS = 7 * 86_400_000;
const DEFAULT_POLL_MS = 1000;

async function setUp(
  settings: ThawSettings,
  { context, logger }: SetupHost,
): Promise<FeatureFactory> {
  const retention = settings.get("jobs.retention");
  const retentionMs = retention === undefined
    ? DEFAULT_RETENTION_MS
    : durationKey(retention, settings.where("jobs.retention"), { max: Number.MAX_SAFE_INTEGER });
  const poll = settings.get("jobs.poll-interval");
  const pollMs = poll === undefined
    ? DEFAULT_POLL_MS
    : durationKey(poll, settings.where("jobs.poll-interval"), { min: 1 });
  const named = settings.get("jobs.datasource");
  const workers = new JobWorkers(logger);
  const datasources = () =>
    context.beans().flatMap(({ instance }) => instance instanceof SqlClient ? [instance.name] : []);
  // The datasources' clients are made before this bean: they were registered first.
  const namedClient = (name: string): unknown => context.findBean(name);
  let store: SqlJobStore | undefined;
  const counts = async () => {
    const kept = store as SqlJobStore;
    try {
      return await kept.counts();
    } catch (error) {
      throw kept.named(error, "count the jobs");
    }
  };
  // Where the app has OpenTelemetry's API; this module is loaded only then.
  const api = await optionalApi();
  const telemetry: JobsTelemetry | undefined = api === undefined
    ? undefined
    : new (await import("./jobs_telemetry.ts")).JobsTelemetry(api, counts);
  context.registerBean({
    name: "jobQueue",
    type: JobQueue,
    source: "jobs()",
    create: () => {
      const sql = named === undefined ? context.getBean(SqlClient) : namedClient(named);
      if (!(sql instanceof SqlClient)) {
        throw new DefinitionError(
          `${settings.where("jobs.datasource")}: no datasource is named ${JSON.stringify(named)}` +
            ` (the datasources: ${datasources().join(", ") || "none"})`,
        );
      }
      store = new SqlJobStore(sql, retentionMs, workers.wake);
      return Promise.resolve(new JobQueue(store, telemetry));
    },
  });
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  context.register(jobsHealth(counts));
  context.register(jobsEndpoint(() => store as SqlJobStore));
  return (host) => {
    const handlers = foundHandlers(host.context.beans());
    const kept = store as SqlJobStore;
    workers.attach(
      kept,
      retentionMs,
      handlers.map((handler) => new JobWorker(kept, handler, { pollMs, logger, telemetry })),
    );
    // Another process's enqueue wakes this one's workers at once on PostgreSQL.
    const notifications = kept.notifies && handlers.length > 0
      ? new JobNotifications(kept.sql.pool as ListeningPool, workers.wake, logger)
      : undefined;
    return {
      start: () => {
        telemetry?.follow();
        workers.start();
        notifications?.start();
      },
      close: {
        jobs: async () => {
          notifications?.close();
          await workers.close(host.shutdownTimeoutMs);
          telemetry?.close();
          return undefined;
        },
      },
    };
  };
}
