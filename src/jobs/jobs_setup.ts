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
import type { JobStore, StateCount } from "./job_store.ts";
import { SqlJobStore } from "./sql_job_store.ts";
import type { SqsSettings } from "./sqs_job_store.ts";
import { importOptional } from "../runtime/optional_module.ts";

/**
 * Durable background jobs, for `bootstrap({ jobs: jobs() })`: the `JobQueue` bean, and a worker
 * for each `@JobHandler` queue, from `app.start()` (which `listen` calls). The jobs are kept in
 * the table `jobsMigration()` makes, in the datasource `jobs.datasource` names (the primary one
 * by default), or with `jobs.store: sqs` in SQS queues (through `@aws-sdk/client-sqs`).
 * `app.close()` stops taking jobs, aborts the signals of the runs in progress and waits up to
 * `server.shutdown-timeout` for them; a job whose run did not finish is taken again.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/jobs.md
 */
export function jobs(): JobsFeature {
  return jobsFeature(setUp);
}

// `7d`: what a done job is kept unless `jobs.retention` says otherwise.
const DEFAULT_RETENTION_MS = 7 * 86_400_000;
const DEFAULT_POLL_MS = 1000;
// SQS's longest long poll, its default here.
const MAX_SQS_WAIT_S = 20;

async function setUp(settings: ThawSettings, host: SetupHost): Promise<FeatureFactory> {
  const { context, logger } = host;
  const { retentionMs, pollMs } = jobsTimes(settings);
  // Where the app has OpenTelemetry's API; this module is loaded only then.
  const api = await optionalApi();
  const telemetryOf = async (counts: () => Promise<StateCount[]>) =>
    api === undefined
      ? undefined
      : new (await import("./jobs_telemetry.ts")).JobsTelemetry(api, counts);
  if (settings.get("jobs.store") === "cloudflare") {
    // The queue service keeps the jobs, and no worker can count them.
    const telemetry = await telemetryOf(() => Promise.resolve([]));
    const { cloudflareSetup } = await import("./cloudflare_setup.ts");
    return cloudflareSetup(settings, host, telemetry);
  }
  const workers = new JobWorkers(logger);
  const makeStore = await storeMaker(settings, context, retentionMs);
  let store: JobStore | undefined;
  const counts = async () => {
    const kept = store as JobStore;
    try {
      return await kept.counts();
    } catch (error) {
      throw kept.named(error, "count the jobs");
    }
  };
  const telemetry = await telemetryOf(counts);
  context.registerBean({
    name: "jobQueue",
    type: JobQueue,
    source: "jobs()",
    create: () => {
      store = makeStore(workers.wake);
      return Promise.resolve(new JobQueue(store, telemetry));
    },
  });
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  context.register(jobsHealth(counts));
  context.register(jobsEndpoint(() => store as JobStore));
  return (host) => {
    const handlers = foundHandlers(host.context.beans());
    const kept = store as JobStore;
    kept.know?.(handlers.map(({ queue, settings, where }) => ({
      queue,
      timeoutMs: settings.timeoutMs,
      where,
    })));
    workers.attach(
      kept,
      retentionMs,
      handlers.map((handler) => new JobWorker(kept, handler, { pollMs, logger, telemetry })),
    );
    // Another process's enqueue wakes this one's workers at once on PostgreSQL.
    const notifications = kept instanceof SqlJobStore && kept.notifies && handlers.length > 0
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
          kept.close?.();
          telemetry?.close();
          return undefined;
        },
      },
    };
  };
}

// `jobs.retention` and `jobs.poll-interval`, in ms.
function jobsTimes(settings: ThawSettings): { retentionMs: number; pollMs: number } {
  const retention = settings.get("jobs.retention");
  const poll = settings.get("jobs.poll-interval");
  return {
    retentionMs: retention === undefined
      ? DEFAULT_RETENTION_MS
      : durationKey(retention, settings.where("jobs.retention"), { max: Number.MAX_SAFE_INTEGER }),
    pollMs: poll === undefined
      ? DEFAULT_POLL_MS
      : durationKey(poll, settings.where("jobs.poll-interval"), { min: 1 }),
  };
}

// What makes the store once the datasources' beans are: a datasource's table, or SQS, its SDK
// loaded now (only for an app that keeps its jobs there: the SDK stays out of every other).
async function storeMaker(
  settings: ThawSettings,
  context: SetupHost["context"],
  retentionMs: number,
): Promise<(wake: (queue: string) => void) => JobStore> {
  if (settings.get("jobs.store") !== "sqs") {
    return (wake) => new SqlJobStore(datasourceOf(settings, context), retentionMs, wake);
  }
  const sqs = sqsSettings(settings);
  const { SqsJobStore } = await importOptional(() => import("./sqs_job_store.ts"), {
    packages: ["@aws-sdk/client-sqs"],
    neededBy: `${settings.where("jobs.store")} (sqs)`,
    what: "the AWS SDK's SQS client",
  });
  return (wake) => new SqsJobStore(sqs, wake);
}

// The datasource `jobs.datasource` names, else the primary one.
function datasourceOf(settings: ThawSettings, context: SetupHost["context"]): SqlClient {
  const named = settings.get("jobs.datasource");
  // The datasources' clients are made before this bean: they were registered first.
  const sql = named === undefined ? context.getBean(SqlClient) : context.findBean(named);
  if (!(sql instanceof SqlClient)) {
    const datasources = context.beans().flatMap(({ instance }) =>
      instance instanceof SqlClient ? [instance.name] : []
    );
    throw new DefinitionError(
      `${settings.where("jobs.datasource")}: no datasource is named ${JSON.stringify(named)}` +
        ` (the datasources: ${datasources.join(", ") || "none"})`,
    );
  }
  return sql;
}

// `jobs.sqs.*`, checked.
function sqsSettings(settings: ThawSettings): SqsSettings {
  const id = settings.get("jobs.sqs.access-key-id");
  const secret = settings.get("jobs.sqs.secret-access-key");
  if ((id === undefined) !== (secret === undefined)) {
    throw new DefinitionError(
      `${
        settings.where(id === undefined ? "jobs.sqs.secret-access-key" : "jobs.sqs.access-key-id")
      }` +
        ": jobs.sqs.access-key-id and jobs.sqs.secret-access-key go together (or neither: the " +
        "SDK's default credentials)",
    );
  }
  const wait = settings.get("jobs.sqs.wait-time");
  const waitMs = wait === undefined
    ? MAX_SQS_WAIT_S * 1000
    : durationKey(wait, settings.where("jobs.sqs.wait-time"), { max: MAX_SQS_WAIT_S * 1000 });
  return {
    endpoint: settings.get("jobs.sqs.endpoint"),
    region: settings.get("jobs.sqs.region"),
    credentials: id === undefined || secret === undefined
      ? undefined
      : { accessKeyId: id, secretAccessKey: secret },
    waitSeconds: Math.floor(waitMs / 1000),
  };
}
