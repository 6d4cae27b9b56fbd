// @EventListener and the ApplicationEventPublisher as an app uses them: what the decorator
// refuses, the order listeners run in, which events reach which listener, failures, async
// listeners, and events published while the app starts.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApplicationEventPublisher,
  Autowired,
  Bean,
  bootstrap,
  type Class,
  Component,
  Configuration,
  EventListener,
  type EventListenerOptions,
  PostConstruct,
  Service,
} from "../../mod.ts";
import type { EventListenerDecorator } from "../../types.ts";
import { memoryLogger } from "../helpers.ts";
import { propertyOptions } from "../property.ts";

class OrderEvent {
  constructor(readonly id: number) {}
}
class OrderPlaced extends OrderEvent {}
class OrderShipped extends OrderEvent {}

/** The bean that publishes, as an app's own service would. */
@Service()
class Orders {
  @Autowired(ApplicationEventPublisher)
  events!: ApplicationEventPublisher;
}

/** A promise and the function that resolves it: a state a test waits on. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

describe("@EventListener: what it refuses, when the class is defined", () => {
  it("anything but a class of events, and options it does not know", () => {
    for (const given of [undefined, null, "OrderPlaced", {}]) {
      assert.throws(
        () => EventListener(given as unknown as Class<object>),
        (e: unknown) =>
          e instanceof TypeError &&
          e.message === `@EventListener(${String(given)}): takes the class of the events to ` +
              `receive (@EventListener(OrderPlaced))`,
      );
    }
    const refused: [unknown, RegExp][] = [
      [null, /^@EventListener\(OrderPlaced\): the options must be an object, got null$/],
      [
        { sync: true },
        /^@EventListener\(OrderPlaced\): unknown option "sync"; the options are async$/,
      ],
      [{ async: "yes" }, /^@EventListener\(OrderPlaced, \{"async":"yes"\}\): async is a boolean$/],
    ];
    for (const [options, message] of refused) {
      assert.throws(
        () => EventListener(OrderPlaced, options as EventListenerOptions),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
      );
    }
  });

  it("a static method, a method of two parameters, a second @EventListener on one method", () => {
    assert.throws(
      () => {
        class Listener {
          @EventListener(OrderPlaced)
          static on(): void {}
        }
        return Listener;
      },
      { name: "TypeError", message: "@EventListener on on: it decorates instance methods only" },
    );
    assert.throws(
      () => {
        class Listener {
          // @ts-expect-error: the types refuse it too, for a caller that gets past them.
          @EventListener(OrderPlaced)
          on(_event: OrderPlaced, _extra: unknown): void {}
        }
        return Listener;
      },
      {
        name: "TypeError",
        message: "@EventListener on on: a listener takes the event, or nothing; this one " +
          "declares 2 parameters",
      },
    );
    assert.throws(
      () => {
        class Listener {
          @EventListener(OrderPlaced)
          @EventListener(OrderShipped)
          on(_event: OrderEvent): void {}
        }
        return Listener;
      },
      /^TypeError: @EventListener on on: given twice; a method listens to one event class/,
    );
  });

  it("a legacy (experimentalDecorators) call, naming the class and method", () => {
    class Listener {
      on(): void {}
    }
    const legacy = EventListener(OrderPlaced) as unknown as (...args: unknown[]) => void;
    assert.throws(
      () =>
        legacy(Listener.prototype, "on", Object.getOwnPropertyDescriptor(Listener.prototype, "on")),
      /^TypeError: @EventListener on Listener\.on was called as a legacy decorator/,
    );
  });
});

describe("ApplicationEventPublisher.publishEvent", () => {
  it("awaits each listener in turn: the beans in registration order, each bean's as declared", async () => {
    const calls: string[] = [];
    @Service()
    class Invoices {
      @EventListener(OrderPlaced)
      async issue(event: OrderPlaced): Promise<void> {
        calls.push(`issue ${event.id} starts`);
        await Promise.resolve();
        calls.push(`issue ${event.id} ends`);
      }
      @EventListener(OrderPlaced)
      file(): void {
        calls.push("file");
      }
    }
    @Service()
    class Stock {
      @EventListener(OrderPlaced)
      async reserve(event: OrderPlaced): Promise<void> {
        calls.push(`reserve ${event.id} starts`);
        await new Promise((resolve) => setTimeout(resolve, 0));
        calls.push(`reserve ${event.id} ends`);
      }
    }
    // Stock is registered first; Orders is created last, as the class it is.
    const app = await bootstrap({ components: [Stock, Orders, Invoices] });
    const published = app.getBean(Orders).events.publishEvent(new OrderPlaced(7));
    assert.deepEqual(calls, ["reserve 7 starts"], "the first listener runs at once");
    await published;
    assert.deepEqual(calls, [
      "reserve 7 starts",
      "reserve 7 ends",
      "issue 7 starts",
      "issue 7 ends",
      "file",
    ]);
    assert.equal(app.getBean(ApplicationEventPublisher), app.getBean(Orders).events);
  });

  it("runs a superclass's listeners first; an overridden one once, as the subclass has it; #private too", async () => {
    const calls: string[] = [];
    class Base {
      @EventListener(OrderPlaced)
      first(): void {
        calls.push("Base.first");
      }
      @EventListener(OrderPlaced)
      second(): void {
        calls.push("Base.second");
      }
      @EventListener(OrderPlaced)
      third(): void {
        calls.push("Base.third");
      }
    }
    @Service()
    class Derived extends Base {
      @EventListener(OrderPlaced)
      #own(): void {
        calls.push("Derived.#own");
      }
      // Declared again: its place stays the parent's, its event class is the subclass's.
      @EventListener(OrderShipped)
      override second(): void {
        calls.push("Derived.second");
      }
      // Not declared again: still a listener, called as the subclass has it.
      override third(): void {
        calls.push("Derived.third");
      }
    }
    const app = await bootstrap({ components: [Derived, Orders] });
    const { events } = app.getBean(Orders);
    await events.publishEvent(new OrderPlaced(1));
    assert.deepEqual(calls, ["Base.first", "Derived.third", "Derived.#own"]);
    calls.length = 0;
    await events.publishEvent(new OrderShipped(1));
    assert.deepEqual(calls, ["Derived.second"]);
  });

  it("delivers an event to the listeners of its class and of its superclasses, not of its subclasses", async () => {
    const heard: string[] = [];
    @Service()
    class Audit {
      @EventListener(OrderEvent)
      any(event: OrderEvent): void {
        heard.push(`any ${event.constructor.name}`);
      }
      @EventListener(OrderPlaced)
      placed(): void {
        heard.push("placed");
      }
      @EventListener(Object)
      everything(event: object): void {
        heard.push(`everything ${event.constructor.name}`);
      }
    }
    const app = await bootstrap({ components: [Audit, Orders] });
    const { events } = app.getBean(Orders);
    await events.publishEvent(new OrderPlaced(1));
    await events.publishEvent(new OrderShipped(2));
    await events.publishEvent(new OrderEvent(3));
    await events.publishEvent(new Date(0));
    assert.deepEqual(heard, [
      "everything ApplicationStarted",
      "any OrderPlaced",
      "placed",
      "everything OrderPlaced",
      "any OrderShipped",
      "everything OrderShipped",
      "any OrderEvent",
      "everything OrderEvent",
      "everything Date",
    ]);
  });

  it("rejects with what a listener threw; the listeners after it, async ones included, do not run", async () => {
    const calls: string[] = [];
    const failure = new RangeError("out of stock");
    @Service()
    class Stock {
      @EventListener(OrderPlaced)
      check(): void {
        calls.push("check");
      }
      @EventListener(OrderPlaced, { async: true })
      notify(): void {
        calls.push("notify");
      }
      @EventListener(OrderPlaced)
      async reserve(): Promise<void> {
        calls.push("reserve");
        await Promise.resolve();
        throw failure;
      }
      @EventListener(OrderPlaced)
      ship(): void {
        calls.push("ship");
      }
    }
    @Service()
    class Mail {
      @EventListener(OrderPlaced)
      send(): void {
        calls.push("send");
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Stock, Mail, Orders], logger });
    await assert.rejects(app.getBean(Orders).events.publishEvent(new OrderPlaced(1)), (e) => {
      assert.equal(e, failure, "the listener's own error, not a wrapper");
      return true;
    });
    // close() waits for async runs: had one been started, it would have run by now.
    await app.close();
    assert.deepEqual(calls, ["check", "reserve"]);
    assert.deepEqual(logger.lines, []);
  });

  it("runs async listeners after the promise has resolved, not waited for; logs what they throw", async () => {
    const calls: string[] = [];
    const mailed = signal();
    const pushed = signal();
    const failed = new Error("mail server down");
    @Service()
    class Mail {
      @EventListener(OrderPlaced, { async: true })
      async send(event: OrderPlaced): Promise<void> {
        calls.push(`send ${event.id}`);
        await mailed.promise;
        throw failed;
      }
      @EventListener(OrderPlaced)
      record(event: OrderPlaced): void {
        calls.push(`record ${event.id}`);
      }
    }
    @Service()
    class Push {
      @EventListener(OrderEvent, { async: true })
      push(event: OrderEvent): void {
        calls.push(`push ${event.id}`);
        pushed.resolve();
        throw "not an Error";
      }
    }
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Mail, Push, Orders], logger });
    // Called from an async method, as a service would: the async listeners start after it resumes.
    const place = async (id: number) => {
      await app.getBean(Orders).events.publishEvent(new OrderPlaced(id));
      calls.push(`placed ${id}`);
    };
    await place(1);
    assert.deepEqual(calls, ["record 1", "placed 1"]);
    assert.deepEqual(logger.lines, []);
    // Both start, in order, and the second runs though the first has not ended.
    await pushed.promise;
    assert.deepEqual(calls, ["record 1", "placed 1", "send 1", "push 1"]);
    // close() waits for the one still running.
    const closed = app.close();
    mailed.resolve();
    await closed;
    assert.deepEqual(logger.lines, [
      ["Async @EventListener Push.push() threw on OrderPlaced: not an Error", "not an Error"],
      ["Async @EventListener Mail.send() threw on OrderPlaced: mail server down", failed],
    ]);
  });

  it("publishes what a listener returns as an event (each of an array), as Spring does", async () => {
    class Invoiced {
      constructor(readonly order: number) {}
    }
    class Notified {
      constructor(readonly who: string) {}
    }
    const calls: string[] = [];
    @Service()
    class Billing {
      @EventListener(OrderPlaced)
      invoice(event: OrderPlaced): Invoiced {
        calls.push(`invoice ${event.id}`);
        return new Invoiced(event.id);
      }
      @EventListener(Invoiced)
      async notify(event: Invoiced): Promise<Notified[]> {
        calls.push(`invoiced ${event.order}`);
        await Promise.resolve();
        return [new Notified("buyer"), new Notified("seller")];
      }
      @EventListener(Notified)
      notified(event: Notified): null {
        calls.push(`notified ${event.who}`);
        return null;
      }
      @EventListener(OrderPlaced)
      after(event: OrderPlaced): void {
        calls.push(`after ${event.id}`);
      }
      @EventListener(OrderShipped, { async: true })
      shipped(event: OrderShipped): Invoiced {
        calls.push(`shipped ${event.id}`);
        return new Invoiced(event.id);
      }
    }
    const app = await bootstrap({ components: [Billing, Orders] });
    await app.getBean(Orders).events.publishEvent(new OrderPlaced(1));
    // Published as the listener returns, before the next listener of the first event runs.
    assert.deepEqual(calls, [
      "invoice 1",
      "invoiced 1",
      "notified buyer",
      "notified seller",
      "after 1",
    ]);
    calls.length = 0;
    await app.getBean(Orders).events.publishEvent(new OrderShipped(2));
    // An async listener's result too, once it ends; close() waits for what it starts.
    await app.close();
    assert.deepEqual(calls, ["shipped 2", "invoiced 2", "notified buyer", "notified seller"]);
  });

  it("refuses a listener's result that is no event, or the event it received, naming it", async () => {
    @Service()
    class Counter {
      count = 0;
      @EventListener(OrderPlaced)
      count_(): number {
        return ++this.count;
      }
    }
    @Service()
    class Echo {
      @EventListener(OrderShipped)
      echo(event: OrderShipped): OrderShipped[] {
        return [event];
      }
    }
    const app = await bootstrap({ components: [Counter, Echo, Orders] });
    await assert.rejects(app.getBean(Orders).events.publishEvent(new OrderPlaced(1)), {
      name: "TypeError",
      message: "@EventListener Counter.count_() returned a number: what a listener returns is " +
        "published as an event, and an event is an object; return nothing (or null), an event, " +
        "or an array of events",
    });
    await assert.rejects(app.getBean(Orders).events.publishEvent(new OrderShipped(1)), {
      name: "TypeError",
      message: "@EventListener Echo.echo() returned the OrderShipped it received: published " +
        "again, it would reach the listener without end",
    });
  });

  it("rejects what is not an object with a TypeError, and runs nothing", async () => {
    let heard = 0;
    @Service()
    class Audit {
      @EventListener(Object)
      any(): void {
        heard++;
      }
    }
    const app = await bootstrap({ components: [Audit, Orders] });
    assert.equal(heard, 1, "ApplicationStarted");
    const { events } = app.getBean(Orders);
    for (
      const [given, shown] of [[null, "null"], ["placed", "string"], [7, "number"], [
        undefined,
        "undefined",
      ]]
    ) {
      await assert.rejects(events.publishEvent(given as unknown as object), {
        name: "TypeError",
        message:
          `publishEvent takes an event object (an instance of the event's class), got ${shown}`,
      });
    }
    assert.equal(heard, 1);
  });

  it("from a @PostConstruct hook, reaches the beans made so far; later events reach every bean", async () => {
    const heard: string[] = [];
    @Service()
    class Early {
      @EventListener(OrderPlaced)
      on(event: OrderPlaced): void {
        heard.push(`early ${event.id}`);
      }
    }
    @Service()
    class Warmup {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(OrderPlaced)
      on(event: OrderPlaced): void {
        heard.push(`warmup ${event.id}`);
      }
      @PostConstruct()
      async start(): Promise<void> {
        await this.events.publishEvent(new OrderPlaced(1));
      }
    }
    @Service()
    class Late {
      @EventListener(OrderPlaced)
      on(event: OrderPlaced): void {
        heard.push(`late ${event.id}`);
      }
    }
    const app = await bootstrap({ components: [Early, Warmup, Late] });
    // Warmup itself is not made until its hook has run; Late comes after it.
    assert.deepEqual(heard, ["early 1"]);
    await app.getBean(Warmup).events.publishEvent(new OrderPlaced(2));
    assert.deepEqual(heard, ["early 1", "early 2", "warmup 2", "late 2"]);
  });

  it("reaches only the app's beans: not an instance made with new; a @Bean method's result once", async () => {
    const heard: string[] = [];
    class Listener {
      constructor(readonly name: string) {}
      @EventListener(OrderPlaced)
      on(): void {
        heard.push(this.name);
      }
    }
    @Configuration()
    class Listeners {
      @Bean()
      listener(): Listener {
        return new Listener("bean");
      }
    }
    // The same object under a second name listens once.
    @Configuration()
    class Aliases {
      @Autowired("listener")
      listener!: Listener;
      @Bean()
      alias(): Listener {
        return this.listener;
      }
    }
    const app = await bootstrap({ components: [Listeners, Aliases, Orders] });
    const outside = new Listener("outside");
    assert.ok(outside instanceof Listener);
    await app.getBean(Orders).events.publishEvent(new OrderPlaced(1));
    assert.deepEqual(heard, ["bean"]);
  });

  it("is the app's own when it registers one: Thaw makes none", async () => {
    const published: object[] = [];
    let heard = 0;
    @Component()
    class RecordingPublisher extends ApplicationEventPublisher {
      publishEvent(event: object): Promise<void> {
        published.push(event);
        return Promise.resolve();
      }
    }
    @Service()
    class Audit {
      @EventListener(OrderPlaced)
      on(): void {
        heard++;
      }
    }
    const app = await bootstrap({ components: [RecordingPublisher, Audit, Orders] });
    const event = new OrderPlaced(1);
    await app.getBean(Orders).events.publishEvent(event);
    assert.ok(app.getBean(Orders).events instanceof RecordingPublisher);
    assert.deepEqual(published, [event]);
    assert.equal(heard, 0);
  });
});

// The property: any beans, each with listeners of any event class of a small hierarchy (or none),
// sync or async; any event of it. The listeners that run are those of the reference model, in its
// order: sync ones before the promise resolves, async ones after it.
class Root {}
class Middle extends Root {}
class Leaf extends Middle {}
class Apart {}
const EVENT_CLASSES: readonly Class<object>[] = [Root, Middle, Leaf, Apart];
const METHODS = ["a", "b", "c"] as const;

interface Slot {
  readonly on: number;
  readonly async: boolean;
}
type Beans = readonly (readonly (Slot | null)[])[];

const slots = fc.option(
  fc.record({ on: fc.integer({ min: 0, max: 3 }), async: fc.boolean() }),
  { nil: null },
);
const beanLists: fc.Arbitrary<Beans> = fc.array(
  fc.array(slots, { minLength: 3, maxLength: 3 }),
  { minLength: 1, maxLength: 5 },
);

const unmarked: EventListenerDecorator<object> = () => {};

/** Bean `i`, with a listener in each slot that has one. */
function listenerBean(i: number, marks: readonly (Slot | null)[], calls: string[]): Class {
  const mark = (slot: Slot | null): EventListenerDecorator<object> =>
    slot === null ? unmarked : EventListener(EVENT_CLASSES[slot.on], { async: slot.async });
  @Component(`bean${i}`)
  class Listener {
    @mark(marks[0])
    a(): void {
      calls.push(`${i}.a`);
    }
    @mark(marks[1])
    async b(): Promise<void> {
      await Promise.resolve();
      calls.push(`${i}.b`);
    }
    @mark(marks[2])
    c(): void {
      calls.push(`${i}.c`);
    }
  }
  return Listener;
}

/** The reference model: which listeners an event of class `event` reaches, in order. */
function expected(beans: Beans, event: number, async: boolean): string[] {
  const reached: string[] = [];
  beans.forEach((marks, i) =>
    marks.forEach((slot, k) => {
      if (slot === null || slot.async !== async) return;
      if (EVENT_CLASSES[event].prototype instanceof EVENT_CLASSES[slot.on] || event === slot.on) {
        reached.push(`${i}.${METHODS[k]}`);
      }
    })
  );
  return reached;
}

describe("publishEvent over random listeners (property)", () => {
  it("runs the listeners the model says, in its order, the async ones after the promise", async () => {
    await fc.assert(
      fc.asyncProperty(beanLists, fc.integer({ min: 0, max: 3 }), async (beans, event) => {
        const calls: string[] = [];
        const classes = beans.map((marks, i) => listenerBean(i, marks, calls));
        const app = await bootstrap({ components: [...classes, Orders] });
        const { events } = app.getBean(Orders);
        // Twice: the second publication finds the listeners the first one found.
        for (let round = 0; round < 2; round++) {
          calls.length = 0;
          const Event = EVENT_CLASSES[event] as new () => object;
          await events.publishEvent(new Event());
          assert.deepEqual(calls, expected(beans, event, false));
        }
        // close() waits for the async runs. Those of one event start together, in order: the
        // ones that push at once come before those that push after an await (b).
        await app.close();
        const asyncOnes = expected(beans, event, true);
        const perEvent = [
          ...asyncOnes.filter((c) => !c.endsWith(".b")),
          ...asyncOnes.filter((c) => c.endsWith(".b")),
        ];
        assert.deepEqual(
          calls.slice(expected(beans, event, false).length),
          [...perEvent, ...perEvent],
        );
      }),
      propertyOptions(100),
    );
  });
});
