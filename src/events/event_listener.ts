import type { Class } from "../context/class.ts";
import { methodAccess, ownEntry } from "../context/class_record.ts";
import { bringFeature } from "../app_feature.ts";
import { type ListenerRecord, LISTENERS } from "./listener_record.ts";
import { eventsFeature } from "./lifecycle_events.ts";
import { checkOptionsObject } from "../options_object.ts";

/** Options of {@linkcode EventListener}. */
export interface EventListenerOptions {
  /**
   * Runs the method once the publisher's promise has resolved, without the publisher waiting for
   * it (Spring's `@Async` on a listener); what it throws is logged with the app's logger.
   * `app.close()` waits for the runs still going, within `server.shutdown-timeout`, before the
   * beans stop. `false` by default.
   */
  readonly async?: boolean;
}

/**
 * What {@linkcode EventListener} returns: a decorator for an instance method that takes the event
 * (or nothing).
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#eventlistenerdecorator
 */
export type EventListenerDecorator<E> = <This>(
  value: (this: This, event: E) => unknown,
  context: ClassMethodDecoratorContext<This, (this: This, event: E) => unknown>,
) => void;

const OPTIONS: readonly string[] = ["async"];

/**
 * Marks a method of a bean that receives the events that are instances of `eventClass` (Spring's
 * `@EventListener`), published by an {@linkcode ApplicationEventPublisher} or by Thaw
 * (`ApplicationStarted`, `ApplicationClosing`). A subclass's events reach it too: a listener of
 * `ApplicationEvent` hears every event that extends it.
 *
 * The method takes the event, or nothing, and may be `async`: the publisher waits for it. Listeners
 * run in the order the beans were registered, a bean's as declared (its superclass's first); one
 * that throws rejects `publishEvent` with what it threw, and those after it do not run. With
 * `{ async: true }` it runs once `publishEvent` has resolved instead, not waited for, and what it
 * throws is logged. Only the beans of the app listen: an instance made with `new` does not.
 *
 * What the method returns (resolves to) is published as an event, as Spring does: an object as one
 * event, an array as each of its events, `undefined` or `null` as nothing. A value that is no
 * event (a number, a string), or the event the method received, is refused with a `TypeError`.
 *
 * A method that is not an instance method, or that declares more than one parameter, is refused
 * when the class is defined; so is a second `@EventListener` on one method (listen to a common
 * superclass of the events instead).
 *
 * @param eventClass the class of the events heard, its subclasses included
 * @param options `async`: run after `publishEvent` resolves, not waited for
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#eventlistener
 */
export function EventListener<E extends object>(
  eventClass: Class<E>,
  options: EventListenerOptions = {},
): EventListenerDecorator<E> {
  if (typeof eventClass !== "function") {
    throw new TypeError(
      `@EventListener(${String(eventClass)}): takes the class of the events to receive ` +
        `(@EventListener(OrderPlaced))`,
    );
  }
  const fail = (why: string): never => {
    throw new TypeError(`@EventListener(${eventClass.name}, ${JSON.stringify(options)}): ${why}`);
  };
  checkOptionsObject(options as unknown, `@EventListener(${eventClass.name})`, OPTIONS);
  if (options.async !== undefined && typeof options.async !== "boolean") fail("async is a boolean");
  const async = options.async === true;
  return (value, context) => {
    const access = methodAccess("EventListener", value, context as ClassMethodDecoratorContext);
    const declared = typeof value === "function" ? value.length : 0;
    if (declared > 1) {
      throw new TypeError(
        `@EventListener on ${access.methodName}: a listener takes the event, or nothing; this ` +
          `one declares ${declared} parameters`,
      );
    }
    const listeners = ownEntry<ListenerRecord[]>(context.metadata, LISTENERS, () => []);
    if (listeners.some((record) => record.methodName === access.methodName)) {
      throw new TypeError(
        `@EventListener on ${access.methodName}: given twice; a method listens to one event ` +
          `class (a common superclass of the events, or a method each)`,
      );
    }
    listeners.push({ ...access, eventClass, async });
    // The publishing comes with the decorator.
    bringFeature(context.metadata, eventsFeature);
  };
}
