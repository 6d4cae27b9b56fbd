// `jobs()` on Cloudflare Queues (`jobs.store: cloudflare`): the `JobQueue` bean sends through the
// worker's producer bindings, and the app's `queue` export runs the handlers. Loaded only for an
// app that keeps its jobs there.
import type { FeatureFactory } from "../app_feature.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import { DefinitionError } from "../context/errors.ts";
import type { SetupHost } from "../feature_value.ts";
import { shownValue } from "../shown_value.ts";
import { isMapping } from "../object_guards.ts";
import { CloudflareConsumer } from "./cloudflare_consumer.ts";
import { CloudflareQueues } from "./cloudflare_queues.ts";
import { foundHandlers } from "./job_handler.ts";
import { JobQueue } from "./job_queue.ts";
import type { JobsTelemetry } from "./jobs_telemetry.ts";

// A queue's name, or a dead queue's (`<queue>-dead`).
const BOUND_QUEUE = /^[A-Za-z0-9_-]{1,80}$/;

/** Registers the `JobQueue` bean over the worker's bindings; the factory of the consumer. */
export function cloudflareSetup(
  settings: ThawSettings,
  { context, logger }: SetupHost,
  telemetry: JobsTelemetry | undefined,
): FeatureFactory {
  const queues = new CloudflareQueues(bindingNames(settings));
  context.registerBean({
    name: "jobQueue",
    type: JobQueue,
    source: "jobs()",
    create: () => Promise.resolve(new JobQueue(queues, telemetry)),
  });
  return (host) => {
    const handlers = foundHandlers(host.context.beans());
    const consumer = new CloudflareConsumer(handlers, queues, { logger, telemetry });
    return {
      // The worker's bindings come with each event: kept before the event is handled.
      handlers: ({ fetch, scheduled }) => ({
        fetch: (request, env, ctx) => {
          queues.bind(env);
          return fetch(request, env, ctx);
        },
        scheduled: (controller, env, ctx) => {
          queues.bind(env);
          return scheduled(controller, env, ctx);
        },
        queue: (batch, env) => {
          queues.bind(env);
          return consumer.consume(batch);
        },
      }),
      start: () => telemetry?.follow(),
      close: {
        jobs: async () => {
          await consumer.close(host.shutdownTimeoutMs);
          telemetry?.close();
          return undefined;
        },
      },
    };
  };
}

// `jobs.cloudflare.bindings`: queue names to binding names, checked.
function bindingNames(settings: ThawSettings): Map<string, string> {
  const given = settings.get("jobs.cloudflare.bindings");
  const where = settings.where("jobs.cloudflare.bindings");
  if (given === undefined) return new Map();
  if (!isMapping(given)) {
    throw new DefinitionError(
      `${where}: give a mapping of queue names to producer bindings (mail: MAIL_QUEUE), got ` +
        shownValue(given),
    );
  }
  const names = new Map<string, string>();
  for (const [queue, binding] of Object.entries(given)) {
    if (!BOUND_QUEUE.test(queue)) {
      throw new DefinitionError(
        `${where}: ${
          JSON.stringify(queue)
        } is no queue's name (1 to 80 letters, digits, _ and -: ` +
          "a queue's, or a dead queue's, <queue>-dead)",
      );
    }
    if (typeof binding !== "string" || binding === "") {
      throw new DefinitionError(
        `${where}.${queue}: give the name of the queue's producer binding, got ${
          shownValue(binding)
        }`,
      );
    }
    names.set(queue, binding);
  }
  return names;
}
