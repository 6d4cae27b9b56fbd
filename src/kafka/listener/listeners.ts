// The seam between `kafka()` and the listeners: once the beans are made, the feature hands them
// here; every `@KafkaListener` method is checked and gets its consumers, started with the app and
// closed with it.
import { DefinitionError } from "../../context/errors.ts";
import { markedMethods } from "../../tasks/method_marks.ts";
import type { ListenerHost } from "./listener_host.ts";
import { KAFKA_LISTENER, type ListenerMark } from "./kafka_listener.ts";
import { ListenerMember } from "./listener_member.ts";
import { recordWork } from "./record_work.ts";

export type { ListenerHost, ValueDeserializer } from "./listener_host.ts";

/** One listener method and what it runs on, as `kafkaListeners` found it. */
export interface ListenerInfo {
  /** `Class.method`. */
  readonly where: string;
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly concurrency: number;
}

/** The listeners of an app: started once it serves, closed with it. */
export class Listeners {
  readonly #listeners: readonly ListenerRun[];
  #started: Promise<void> | undefined;

  /** @internal made by {@linkcode kafkaListeners} */
  constructor(listeners: readonly ListenerRun[]) {
    this.#listeners = listeners;
  }

  /** The listeners found, in bean order. */
  get info(): readonly ListenerInfo[] {
    return this.#listeners.map((l) => l.info);
  }

  /** The member ids of each listener's consumers (those that joined), for tests and health. */
  get memberIds(): readonly (readonly (string | null)[])[] {
    return this.#listeners.map((l) => l.members.map((m) => m.memberId));
  }

  /** Joins each listener's consumers to their groups; resolves once every one joined. */
  start(): Promise<void> {
    this.#started ??= Promise.all(
      this.#listeners.flatMap((l) => l.members.map((m) => m.start())),
    ).then(() => {});
    return this.#started;
  }

  /**
   * Stops fetching, lets the records running finish for `timeoutMs` (the app's
   * `server.shutdown-timeout`), commits what finished and leaves the groups. Resolves with how many
   * records were still running at the end: those are delivered again (not committed).
   */
  async close(timeoutMs: number): Promise<{ readonly abandoned: number }> {
    // A join still under way counts against the timeout too (each member waits for its own).
    const deadline = Date.now() + timeoutMs;
    const left = await Promise.all(
      this.#listeners.flatMap((l) => l.members.map((m) => m.close(deadline))),
    );
    return { abandoned: left.reduce((n, records) => n + records.length, 0) };
  }
}

interface ListenerRun {
  readonly info: ListenerInfo;
  readonly members: readonly ListenerMember[];
}

/**
 * Finds every `@KafkaListener` method of `beans`, checks it (a `DefinitionError` names
 * `Class.method`), and makes its consumers; nothing connects before `start()`.
 */
export function kafkaListeners(
  beans: readonly { readonly instance: unknown }[],
  host: ListenerHost,
): Listeners {
  const runs: ListenerRun[] = [];
  for (const { instance } of beans) {
    for (
      const { where: called, method, mark } of markedMethods<ListenerMark>(
        instance,
        KAFKA_LISTENER,
      )
    ) {
      const where = called.replace(/\(\)$/, "");
      const bean = instance as Record<string, unknown>;
      if (typeof bean[method] !== "function") {
        throw new DefinitionError(`${where}: @KafkaListener is on something not a method`);
      }
      const groupId = mark.groupId ?? host.defaults.groupId;
      if (groupId === undefined || groupId === "") {
        throw new DefinitionError(
          `${where}: @KafkaListener names no groupId and kafka.consumer.group-id is not set; ` +
            `give one of them`,
        );
      }
      const concurrency = mark.concurrency ?? host.defaults.concurrency ?? 1;
      const invoke = (value: unknown, record: unknown) =>
        (bean[method] as (value: unknown, record: unknown) => unknown).call(
          instance,
          value,
          record,
        );
      const work = recordWork({ where, mark, groupId, host, invoke });
      const members = Array.from({ length: concurrency }, () =>
        new ListenerMember({
          client: host.client,
          clientOptions: host.clientOptions,
          groupId,
          topics: mark.topics,
          autoOffsetReset: host.defaults.autoOffsetReset ?? "latest",
          sessionTimeoutMs: host.defaults.sessionTimeoutMs ?? 45_000,
          heartbeatIntervalMs: host.defaults.heartbeatIntervalMs ?? 3000,
          rebalanceTimeoutMs: host.defaults.rebalanceTimeoutMs ?? 60_000,
          batch: mark.batch ? 500 : 1,
          where,
          logger: host.logger,
        }, work));
      runs.push({ info: { where, topics: mark.topics, groupId, concurrency }, members });
    }
  }
  return new Listeners(runs);
}
