// Delivers an event to the `@EventListener` methods of an app's beans (Spring's
// `ApplicationEventMulticaster`): the listeners are read from the classes' metadata when a
// publication first needs them, and the async ones are kept track of until they end, so that
// `app.close()` can wait for them. Once the close stops the beans, it delivers no more.
import { awaitedForm } from "../context/awaited_form.ts";
import type { Class } from "../context/class.ts";
import { classesOf, type ContextLogger, entryOf } from "../context/class_record.ts";
import { messageOf } from "../context/message_of.ts";
import { printable } from "../shown_value.ts";
import { type ListenerRecord, LISTENERS } from "./listener_record.ts";
import { runDetached } from "./detached_run.ts";
import { Deferred } from "../runtime/deferred.ts";

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
  // Set once the app's close begins stopping the beans: nothing is delivered after.
  #closed = false;

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
   * later turn of the event loop, together; what they throw is logged. Never throws: what goes
   * wrong (an event whose prototype cannot be read) rejects the promise. Once {@linkcode close}
   * has been called, rejects and calls no listener, as it does for the listeners of an event
   * published before that were yet to run.
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
    if (this.#closed) return Promise.reject(closedError(event));
    let listeners: Listener[];
    try {
      // `instanceof` reads the event's prototype chain: a Proxy's trap may throw.
      listeners = this.#listeners().filter((listener) => event instanceof listener.eventClass);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      (async () => {
        for (const listener of listeners) {
          if (listener.async) continue;
          if (this.#closed) throw closedError(event);
          progress.listener = listener.name;
          const result = await listener.call(event);
          await this.#publishResult(listener, event, result, progress);
        }
      })().then(() => {
        const later = listeners.filter((listener) => listener.async);
        if (later.length > 0 && this.#closed) return reject(closedError(event));
        resolve();
        if (later.length > 0) this.#launch(later, event);
      }, reject);
    });
  }

  /**
   * Delivers nothing more: the app's close calls it once the async runs have ended (or run over
   * their bound), as the beans they would reach start to stop.
   */
  close(): void {
    this.#closed = true;
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
        await Promise.race([Promise.allSettled(this.#running.keys()), timedOut]);
      }
    } finally {
      clearTimeout(timer);
    }
    return [...new Set(this.#running.values())];
  }

  // Starts the async listeners of an event whose promise has just resolved, on a later turn of
  // the event loop: after what its callers do on this one.
  #launch(listeners: Listener[], event: object): void {
    const turned = new Deferred();
    const turn = turned.promise;
    for (const listener of listeners) {
      // Never rejects (the report cannot throw): nothing is left unhandled, and the run is
      // forgotten however it ended.
      // Outside the publisher's transaction (as on another thread in Spring), which may still
      // run, or have ended: its statements are its own, and so are the events it returns.
      const run: Promise<void> = turn
        .then(() =>
          runDetached(async () => {
            const result = await listener.call(event);
            await this.#publishResult(listener, event, result, {});
          })
        )
        .then(() => {}, (error) => this.#report(listener, event, error))
        .finally(() => void this.#running.delete(run));
      // Kept from now, so that a close() that comes before the turn waits for it too.
      this.#running.set(run, listener.name);
    }
    try {
      setTimeout(turned.resolve, 0);
    } catch {
      // No timer may be set where a worker's bootstrap runs (workerd's global scope): then after
      // the reactions to the promise, which resolve() has queued already.
      turned.resolve();
    }
  }

  // What a listener returned, published as Spring publishes it: nothing for `undefined` or
  // `null`, each event of an array in turn, else the value as one event. A value no event can be
  // (a number, a string) is refused rather than dropped, and so is the event the listener
  // received, which would reach it again without end.
  async #publishResult(
    listener: Listener,
    event: object,
    result: unknown,
    progress: Progress,
  ): Promise<void> {
    if (result === undefined || result === null) return;
    const events: readonly unknown[] = Array.isArray(result) ? result : [result];
    for (const item of events) {
      if (item === event) {
        throw new TypeError(
          `@EventListener ${listener.name} returned the ${eventName(event)} it received: ` +
            "published again, it would reach the listener without end",
        );
      }
      if (typeof item !== "object" || item === null) {
        throw new TypeError(
          `@EventListener ${listener.name} returned ${
            events === result ? "an array holding " : ""
          }${describeValue(item)}: what a listener returns is published as an event, and an ` +
            "event is an object; return nothing (or null), an event, or an array of events",
        );
      }
    }
    for (const item of events) await this.publish(item as object, progress);
  }

  // Logs what an async listener threw. The event's class is read as it can be (a getter of user
  // code), and a logger that throws has nothing left to report to: nothing escapes.
  #report(listener: Listener, event: object, error: unknown): void {
    try {
      this.#logger.error(
        `Async @EventListener ${listener.name} threw on ${eventName(event)}: ${
          printable(messageOf(error))
        }`,
        error,
      );
    } catch {
      // The app's logger failed: there is nowhere else to say it.
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
        name: `${className(instance)}.${printable(record.methodName)}()`,
        eventClass: record.eventClass,
        async: record.async,
        call: (event) =>
          (awaitedForm(record.get(instance)) as (event: object) => unknown).call(instance, event),
      });
    }
  }
  return listeners;
}

// The name of an object's class, for messages, kept to one printable line: `(anonymous)` when it
// has none, or none that can be read (a `constructor` getter, a Proxy's trap that throws).
function className(instance: unknown): string {
  try {
    const ctor: unknown = Object.getPrototypeOf(instance)?.constructor;
    const name: unknown = typeof ctor === "function" ? ctor.name : undefined;
    return typeof name === "string" && name !== "" ? printable(name) : "(anonymous)";
  } catch {
    return "(anonymous)";
  }
}

// `a number`, `null`, `a function`: what a value is, for messages.
function describeValue(value: unknown): string {
  if (value === null) return "null";
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

/** The class of an event, for messages: `OrderPlaced`. Never throws. */
export function eventName(event: object): string {
  return className(event);
}

function closedError(event: object): Error {
  return new Error(
    `the application is closed: its beans are stopping or stopped (app.close()); ` +
      `${eventName(event)} reaches no listener`,
  );
}
