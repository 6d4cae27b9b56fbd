// The producer side of jobs on Cloudflare Queues (`jobs.store: cloudflare`): a job is a message
// sent through the queue's producer binding, found in the bindings the runtime passes with each
// event the app is given (`env`: a worker has no other way to reach them). A queue's binding is
// the one `jobs.cloudflare.bindings` names for it, else the one named as the queue.
import type { CheckedEnqueue } from "./enqueue_options.ts";
import type { Enqueued, JobSender } from "./job_store.ts";
import { type Outgoing, outgoingOf } from "./cloudflare_message.ts";

/** What a producer binding is, as Thaw uses it (Cloudflare's `Queue`). */
export interface QueueProducer {
  send(
    body: unknown,
    options?: { readonly contentType?: string; readonly delaySeconds?: number },
  ): Promise<unknown>;
}

/** The queues' producer bindings, and the sending of jobs through them. */
export class CloudflareQueues implements JobSender {
  // Queue name → binding name, from `jobs.cloudflare.bindings`.
  readonly #named: ReadonlyMap<string, string>;
  // The bindings of the latest event: a worker's are the same object from one event to the next.
  #env: Readonly<Record<string, unknown>> | undefined;

  constructor(named: ReadonlyMap<string, string>) {
    this.#named = named;
  }

  /**
   * Keeps the runtime's bindings (`env`), which each event brings: an object holding a queue
   * producer. What a server passes in its place (Deno's connection info, Bun's server) is not.
   */
  bind(env: unknown): void {
    if (typeof env !== "object" || env === null || env === this.#env) return;
    const values = env as Record<string, unknown>;
    if (Object.keys(values).some((key) => isProducer(values[key]))) this.#env = values;
  }

  /** Sends a checked enqueue: a message in Thaw's envelope, with its id. */
  async enqueue(job: CheckedEnqueue, trace: string | undefined): Promise<Enqueued> {
    const where = `JobQueue.enqueue("${job.queue}")`;
    // What Cloudflare Queues cannot do, refused before anything is sent.
    if (job.key !== undefined) {
      throw new TypeError(
        `${where}: a unique key needs a store that can look at its waiting jobs ` +
          "(jobs.store: datasource); Cloudflare Queues cannot",
      );
    }
    if (job.priority !== 0) {
      throw new TypeError(
        `${where}: a priority needs a store that orders its waiting jobs ` +
          "(jobs.store: datasource); Cloudflare Queues delivers in its own order",
      );
    }
    const id = crypto.randomUUID();
    await this.send(job.queue, outgoingOf(job, id, trace, Date.now(), where));
    return { id, created: true };
  }

  /** Sends `message` to `queue`; rejects naming the queue and its binding. */
  async send(queue: string, message: Outgoing): Promise<void> {
    const [name, producer] = this.#producer(queue);
    try {
      await producer.send(
        message.body,
        message.delaySeconds > 0
          ? { contentType: "json", delaySeconds: message.delaySeconds }
          : { contentType: "json" },
      );
    } catch (error) {
      throw new Error(
        `jobs on Cloudflare Queues: could not send a job to queue "${queue}" (binding ${name}): ` +
          `${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      );
    }
  }

  /** Whether `queue` has a producer binding among the bindings seen. */
  has(queue: string): boolean {
    return isProducer(this.#env?.[this.#bindingOf(queue)]);
  }

  #bindingOf(queue: string): string {
    return this.#named.get(queue) ?? queue;
  }

  #producer(queue: string): [string, QueueProducer] {
    const name = this.#bindingOf(queue);
    const env = this.#env;
    if (env === undefined) {
      throw new Error(
        `jobs on Cloudflare Queues: no job can be sent to queue "${queue}" yet: the app is given ` +
          "its bindings with each event (app.fetch(request, env), app.queue, app.scheduled), " +
          "and has had none that holds a queue producer",
      );
    }
    const binding = env[name];
    if (!isProducer(binding)) {
      const producers = Object.keys(env).filter((key) => isProducer(env[key]));
      const how = this.#named.has(queue)
        ? `jobs.cloudflare.bindings names ${JSON.stringify(name)} for it`
        : `bind one named ${JSON.stringify(queue)}, or name yours in jobs.cloudflare.bindings`;
      throw new Error(
        `jobs on Cloudflare Queues: queue "${queue}" has no producer binding ${
          JSON.stringify(name)
        } (${how}; the worker's queue bindings: ${producers.join(", ") || "none"})`,
      );
    }
    return [name, binding];
  }
}

function isProducer(value: unknown): value is QueueProducer {
  return typeof value === "object" && value !== null &&
    typeof (value as { send?: unknown }).send === "function";
}
