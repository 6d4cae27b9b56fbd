// What `bootstrap` knows of application events: where `@EventListener` leaves the publishing of
// the app's own events, and the one look that finds it among the beans. The publishing itself comes
// with the decorator, so that an app without a listener neither loads nor carries it: this file is
// all such an app carries.
import { type ContextLogger, featureOf } from "../context/class_record.ts";
import type { ApplicationContext } from "../context/application_context.ts";
import type { Scheduler } from "../scheduling/scheduled_jobs.ts";

/**
 * Publishes `ApplicationStarted` to the listeners of the beans of `context` (when one throws,
 * stops the beans and rejects, naming it), then resolves to the app's close: it publishes
 * `ApplicationClosing` (within `timeoutMs`), stops the schedules, waits for the async listeners
 * still running (within `timeoutMs`), then refuses the events published from then on and stops
 * the beans, and rejects at the end naming every failure. What async listeners throw goes to
 * `logger`.
 */
export type LifecycleEventsFactory = (
  context: ApplicationContext,
  logger: ContextLogger,
  timeoutMs: number,
  scheduler: Scheduler | undefined,
) => Promise<() => Promise<void>>;

/**
 * Where `@EventListener` leaves the {@linkcode LifecycleEventsFactory} in the metadata of the
 * classes it marks (their listeners are kept under a key of its own).
 */
export const LIFECYCLE_EVENTS: unique symbol = Symbol("thaw.events");

/**
 * The lifecycle events the decorator of some bean's class brought, if any bean has a listener:
 * the one look `bootstrap` takes, so that an app without listeners carries nothing more.
 */
export function lifecycleEvents(
  beans: readonly { readonly instance: unknown }[],
): LifecycleEventsFactory | undefined {
  return featureOf<LifecycleEventsFactory>(beans, LIFECYCLE_EVENTS);
}
