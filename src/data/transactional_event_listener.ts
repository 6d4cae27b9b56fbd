// `@TransactionalEventListener`: an event listener that hears an event only once the transaction
// it was published in reaches a phase (after its commit, by default), so that it never acts on
// work that was rolled back. Built on `@EventListener`'s record: the multicaster calls it at once,
// and it hands the call to the transaction (see Synchronization in transaction_scope.ts).
import type { Class } from "../context/class.ts";
import { methodAccess, ownEntry } from "../context/class_record.ts";
import { bringFeature } from "../app_feature.ts";
import { checkOptionsObject } from "../options_object.ts";
import type { EventListenerDecorator } from "../events/event_listener.ts";
import { type ListenerRecord, LISTENERS } from "../events/listener_record.ts";
import { eventsFeature } from "../events/lifecycle_events.ts";
import { innermostTransaction } from "./transaction_scope.ts";
import type { TransactionPhase } from "./transaction.ts";

export type { TransactionPhase };

/** Options of {@linkcode TransactionalEventListener}. */
export interface TransactionalEventListenerOptions {
  /** When it hears the event; `AFTER_COMMIT` by default. */
  readonly phase?: TransactionPhase | undefined;
  /** Hears an event published outside any transaction at once; `false`: not at all (the default). */
  readonly fallbackExecution?: boolean | undefined;
}

const PHASES: readonly TransactionPhase[] = [
  "BEFORE_COMMIT",
  "AFTER_COMMIT",
  "AFTER_ROLLBACK",
  "AFTER_COMPLETION",
];

/**
 * Marks a method of a bean that hears the events that are instances of `eventClass` published
 * inside a transaction, once that transaction reaches `phase` (Spring's
 * `@TransactionalEventListener`): `AFTER_COMMIT` (the default) after it committed, `AFTER_ROLLBACK`
 * after it rolled back, `AFTER_COMPLETION` after either, `BEFORE_COMMIT` just before it commits,
 * inside it (what it writes commits with the rest; a failure rolls everything back). An event
 * published outside any transaction is not heard, unless `fallbackExecution: true`.
 *
 * The `publishEvent` promise resolves without waiting for such a listener; the transactional call
 * waits for it at its phase, and rejects with what it throws (after a commit the work stays
 * committed; after a failure the call's own error and the listener's come together in an
 * `AggregateError`). What the method returns is not published.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/data.md#transactionaleventlistener
 */
export function TransactionalEventListener<E extends object>(
  eventClass: Class<E>,
  options: TransactionalEventListenerOptions = {},
): EventListenerDecorator<E> {
  const where = `@TransactionalEventListener(${
    (eventClass as Class | undefined)?.name ?? eventClass
  })`;
  if (typeof eventClass !== "function") {
    throw new TypeError(`${where}: takes the class of the events to hear`);
  }
  checkOptionsObject(options as unknown, where, ["phase", "fallbackExecution"]);
  const phase = options.phase ?? "AFTER_COMMIT";
  if (!PHASES.includes(phase)) {
    throw new TypeError(`${where}: phase ${JSON.stringify(phase)} is none of ${PHASES.join(", ")}`);
  }
  const fallback = options.fallbackExecution === true;
  return (value, context) => {
    const access = methodAccess(
      "TransactionalEventListener",
      value,
      context as ClassMethodDecoratorContext,
    );
    const listeners = ownEntry<ListenerRecord[]>(context.metadata, LISTENERS, () => []);
    if (listeners.some((record) => record.methodName === access.methodName)) {
      throw new TypeError(`${where} on ${access.methodName}: a method listens once`);
    }
    listeners.push({
      ...access,
      eventClass,
      async: false,
      // Called by the multicaster at once: hands the call to the transaction it runs in.
      get: (instance) => {
        const method = access.get(instance) as (this: unknown, event: E) => unknown;
        return function (this: unknown, event: E): Promise<void> | undefined {
          const run = async () => {
            await method.call(this, event);
          };
          const transaction = innermostTransaction();
          if (transaction !== undefined) transaction.register({ phase, run });
          // Outside a transaction it is heard as an @EventListener is: publishEvent waits for it.
          else if (fallback) return run();
          return undefined;
        };
      },
    });
    bringFeature(context.metadata, eventsFeature);
  };
}
