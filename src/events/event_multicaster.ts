// Delivers an event to the `@EventListener` methods of an app's beans (Spring's
// `ApplicationEventMulticaster`): the listeners are read from the classes' metadata when a
// publication first needs them, and the async ones are kept track of until they end, so that
// `app.close()` can wait for them.
import { type Class, classesOf, type ContextLogger, entryOf } from "../context/class_record.ts";
import { messageOf } from "../context/application_context.ts";
import { type ListenerRecord, LISTENERS } from "./listener_record.ts";

/** A listener method found on a bean, ready to call. */
interface Listener {
  /** `Mailer.send()`, for messages. */
  readonly name: string;
  readonly eventClass: Class;
  readonly async: boolean;
  readonly call: (event: object) => unknown;
}

/** Where a publication is: the listener running now, which a failure or a timeout names. */
export interface Progress {
  listener?: string;
}

/** The listeners of one app's beans, and the async runs of theirs not ended yet. */
export class EventMulticaster {
  readonly #beans: () => readonly { readonly instance: unknown }[];
  readonly #logger: ContextLogger;
  #found: { readonly count: number; readonly listeners: Listener[] } | undefined;
  // Each async run, until it ends, and the listener it runs.
  readonly #running = new Map<Promise<void>, string>();

  /**
   * The multicaster of the beans `beans` gives (every created bean, in registration order),
   * which logs what async listeners throw to `logger`.
   */
  constructor(beans: () => readonly { readonly instance: unknown }[], logger: ContextLogger) {
    this.#beans = beans;
    this.#logger = logger;
  }

  /**
   * Runs each listener whose event class `event` is an instance of: the beans in registration
   * order, a bean's listeners as declared (its superclass's first). Each one that is not async is
   * awaited in turn; the first that throws rejects the promise with what it threw, and no listener
   * after it runs, nor any async one. The async ones start once the promise has resolved, on a
   * later turn of the event loop, together; what they throw is logged.
   */
  publish(event: object, progress: Progress = {}): Promise<void> {
    if (typeof event !== "object" || event === null) {
      return Promise.reject(
        new TypeError(
          `publishEvent takes an event object (an instance of the event's class), got ${
            event === null ? "null" : typeof event
          }`,
        ),
      );
    }
    const listeners = this.#listeners().filter((listener) => event instanceof listener.eventClass);
    return new Promise((resolve, reject) => {
      (async () => {
        for (const listener of listeners) {
          if (listener.async) continue;
          progress.listener = listener.name;
          await listener.call(event);
        }
      })().then(() => {
        resolve();
        const later = listeners.filter((listener) => listener.async);
        if (later.length > 0) this.#launch(later, event);
      }, reject);
    });
  }

  /**
   * Resolves once every async run has ended (those they start included), or after `timeoutMs`,
   * to the listeners still running then (none: empty).
   */
  async drain(timeoutMs: number): Promise<string[]> {
    if (this.#running.size === 0) return [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    let late = false;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        late = true;
        resolve();
      }, timeoutMs);
    });
    try {
      // A run may publish again, and start more.
      while (this.#running.size > 0 && !late) {
        await Promise.race([Promise.all(this.#running.keys()), timedOut]);
      }
    } finally {
      clearTimeout(timer);
    }
    return [...new Set(this.#running.values())];
  }

  // Starts the async listeners of an event whose promise has just resolved, on a later turn of
  // the event loop: after what its callers do on this one.
  #launch(listeners: Listener[], event: object): void {
    let start!: () => void;
    const turn = new Promise<void>((resolve) => start = resolve);
    for (const listener of listeners) {
      const run: Promise<void> = turn
        .then(() => listener.call(event))
        .then(undefined, (error) =>
          this.#logger.error(
            `Async @EventListener ${listener.name} threw on ${eventName(event)}: ${
              messageOf(error)
            }`,
            error,
          ))
        .then(() => void this.#running.delete(run));
      // Kept from now, so that a close() that comes before the turn waits for it too.
      this.#running.set(run, listener.name);
    }
    try {
      setTimeout(start, 0);
    } catch {
      // No timer may be set where a worker's bootstrap runs (workerd's global scope): then after
      // the reactions to the promise, which resolve() has queued already.
      start();
    }
  }

  #listeners(): Listener[] {
    const beans = this.#beans();
    // Beans are only ever added, and all of them are there once bootstrap has refreshed the
    // context: their count says whether the list found before still holds. Before that (an event
    // published from a @PostConstruct hook) it is the listeners of the beans made so far.
    if (this.#found?.count !== beans.length) {
      this.#found = { count: beans.length, listeners: listenersOf(beans) };
    }
    return this.#found.listeners;
  }
}

/** The listeners of `beans`, in the order they run. */
function listenersOf(beans: readonly { readonly instance: unknown }[]): Listener[] {
  const listeners: Listener[] = [];
  // A `@Bean` method may return another bean: its listeners run once.
  const seen = new Set<unknown>();
  for (const { instance } of beans) {
    if (seen.has(instance)) continue;
    seen.add(instance);
    // The most basic class's first. A method declared again by a subclass keeps its place and
    // takes the subclass's options, and is called as the subclass has it.
    const records = new Map<unknown, ListenerRecord>();
    for (const cls of classesOf(instance).reverse()) {
      for (const record of entryOf<ListenerRecord[]>(cls, LISTENERS) ?? []) {
        records.set(record.identity, record);
      }
    }
    for (const record of records.values()) {
      listeners.push({
        name: `${className(instance)}.${record.methodName}()`,
        eventClass: record.eventClass,
        async: record.async,
        call: (event) => (record.get(instance) as (event: object) => unknown).call(instance, event),
      });
    }
  }
  return listeners;
}

function className(instance: unknown): string {
  const ctor: unknown = Object.getPrototypeOf(instance)?.constructor;
  return typeof ctor === "function" && ctor.name !== "" ? ctor.name : "(anonymous)";
}

/** The class of an event, for messages: `OrderPlaced`. */
export function eventName(event: object): string {
  return className(event);
}
