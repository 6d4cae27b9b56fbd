import type { BeanProvider } from "../context/class_record.ts";
import { EventMulticaster } from "./event_multicaster.ts";

/**
 * Publishes an event to the `@EventListener` methods of the app's beans (Spring's
 * `ApplicationEventPublisher`). Ask for it with `@Autowired(ApplicationEventPublisher)`: unless
 * the app registers a bean of this class (a subclass that records events in a test, say), Thaw
 * makes the one that delivers them.
 *
 * `publishEvent(event)` runs every listener whose event class the event is an instance of (a
 * listener of `OrderEvent` hears an `OrderPlaced extends OrderEvent`): the beans in registration
 * order, a bean's listeners as declared, its superclass's first. Each is awaited in turn, and the
 * promise resolves when the last has run. The first that throws rejects it with what it threw:
 * the listeners after it do not run. A listener declared `{ async: true }` starts once the promise
 * has resolved, is not waited for, and what it throws is logged. An event published from a
 * `@PostConstruct` hook reaches the beans made so far.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#applicationeventpublisher
 */
export abstract class ApplicationEventPublisher {
  /**
   * Delivers `event` (an object: a `TypeError` otherwise) to its listeners; resolves once every
   * listener that is not async has run. It never throws: what goes wrong rejects the promise.
   *
   * Events are delivered until `app.close()` begins stopping the beans: what is published during
   * the close, before that (by a listener of `ApplicationClosing`, a scheduled run or an async
   * listener the close waits for), still reaches its listeners. From the first `@PreDestroy` hook
   * on, as in Spring once the context is closed, it rejects with an `Error` (`the application is
   * closed: ...`) and reaches no listener; nor do the listeners of an event published before
   * that, not yet run then. (An app none of whose beans has a listener has nothing to deliver.)
   */
  abstract publishEvent(event: object): Promise<void>;

  /** The one Thaw makes, when the app registers none. */
  static "thaw.provided": BeanProvider = (support) =>
    new ListenerPublisher(new EventMulticaster(() => support.beans(), support.logger));
}

/** The publisher Thaw makes: its multicaster is the app's, which `app.close()` drains too. */
export class ListenerPublisher extends ApplicationEventPublisher {
  readonly #multicaster: EventMulticaster;

  /** A publisher to `multicaster`. */
  constructor(multicaster: EventMulticaster) {
    super();
    this.#multicaster = multicaster;
  }

  /** Delivers `event` to its listeners. */
  publishEvent(event: object): Promise<void> {
    return this.#multicaster.publish(event);
  }

  /** The multicaster of `bean`, when it is a publisher Thaw made. */
  static multicasterOf(bean: unknown): EventMulticaster | undefined {
    return typeof bean === "object" && bean !== null && #multicaster in bean
      ? (bean as ListenerPublisher).#multicaster
      : undefined;
  }
}
