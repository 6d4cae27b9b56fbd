// Application events under faults: a failure whose report fails too, a close() called from a
// listener, what an error message or a class name brings into a log line, an event whose prototype
// cannot be read, and events published once the app is closed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  type Application,
  ApplicationClosing,
  ApplicationEventPublisher,
  Autowired,
  bootstrap,
  EventListener,
  PreDestroy,
  Service,
} from "../../mod.ts";
import { aggregateOf, memoryLogger } from "../helpers.ts";

/** Waits for a few turns of the event loop: async listeners, and unhandled rejections, show. */
function turns(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * What `run` leaves as unhandled rejections, once a few turns have passed after it (the test
 * runners fail the test on one too).
 */
async function escapedFrom(run: () => Promise<void>): Promise<unknown[]> {
  const escaped: unknown[] = [];
  const onEscape = (reason: unknown) => void escaped.push(reason);
  process.on("unhandledRejection", onEscape);
  try {
    await run();
    await turns();
  } finally {
    process.off("unhandledRejection", onEscape);
  }
  return escaped;
}

// Control characters, line and paragraph separators, lone surrogates.
const UNPRINTABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("an async listener's failure whose report fails too", () => {
  it("escapes nowhere: not an unhandled rejection, and close() still runs every @PreDestroy", async () => {
    // An event whose class cannot be read: its `constructor` getter throws.
    class Unreadable {}
    Object.defineProperty(Unreadable.prototype, "constructor", {
      get() {
        throw new Error("no constructor");
      },
    });
    class Plain {}
    const steps: string[] = [];
    @Service()
    class Mail {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(Unreadable, { async: true })
      unreadable(): void {
        throw new Error("mail server down");
      }
      @EventListener(Plain, { async: true })
      plain(): void {
        throw new Error("mail server down");
      }
      @PreDestroy()
      stop(): void {
        steps.push("Mail @PreDestroy");
      }
    }
    @Service()
    class Pool {
      @PreDestroy()
      stop(): void {
        steps.push("Pool @PreDestroy");
      }
    }

    // The report names the event's class as it can: not at all.
    const logger = memoryLogger();
    const escaped = await escapedFrom(async () => {
      const app = await bootstrap({ components: [Pool, Mail], logger });
      await app.getBean(Mail).events.publishEvent(new Unreadable());
      await turns();
      await app.close();
    });
    assert.deepEqual(escaped, []);
    assert.deepEqual(steps, ["Mail @PreDestroy", "Pool @PreDestroy"]);
    assert.equal(logger.lines.length, 1);
    assert.equal(
      logger.lines[0][0],
      "Async @EventListener Mail.unreadable() threw on (anonymous): mail server down",
    );

    // A logger that throws: nothing more can be reported, and nothing escapes.
    steps.length = 0;
    let reports = 0;
    const broken = {
      error(): void {
        reports++;
        throw new Error("logger down");
      },
    };
    const escapedToo = await escapedFrom(async () => {
      const app = await bootstrap({ components: [Pool, Mail], logger: broken });
      const { events } = app.getBean(Mail);
      await events.publishEvent(new Plain());
      await events.publishEvent(new Unreadable());
      await turns();
      // A close() that comes before the runs have ended waits for them all the same.
      await events.publishEvent(new Plain());
      await app.close();
    });
    assert.deepEqual(escapedToo, []);
    assert.equal(reports, 3);
    assert.deepEqual(steps, ["Mail @PreDestroy", "Pool @PreDestroy"]);
  });
});

describe("app.close() called from a listener", () => {
  it("returns the close in progress: ApplicationClosing is heard once, every @PreDestroy runs once", async () => {
    const heard: string[] = [];
    const calls: Promise<void>[] = [];
    @Service()
    class Guard {
      @EventListener(ApplicationClosing)
      onClosing(): void {
        heard.push("onClosing");
        // A runaway recursion stops here, and fails the test below.
        if (heard.length < 10) calls.push(app.close());
      }
      @EventListener(ApplicationClosing, { async: true })
      later(): void {
        heard.push("later");
        calls.push(app.close());
      }
      @PreDestroy()
      stop(): void {
        heard.push("@PreDestroy");
      }
    }
    // Declared after the class: its listeners run at close, once it is.
    const app: Application = await bootstrap({ components: [Guard] });
    const first = app.close();
    assert.equal(app.close(), first);
    await first;
    assert.deepEqual(heard, ["onClosing", "later", "@PreDestroy"]);
    assert.equal(calls.length, 2);
    for (const call of calls) assert.equal(call, first);
    assert.equal(app.close(), first);
  });

  it("awaited by an ApplicationClosing listener, waits for that listener only until server.shutdown-timeout", async () => {
    const steps: string[] = [];
    @Service()
    class Guard {
      @EventListener(ApplicationClosing)
      async onClosing(): Promise<void> {
        steps.push("onClosing");
        if (steps.length < 10) await app.close().catch(() => {});
        steps.push("onClosing ends");
      }
      @PreDestroy()
      stop(): void {
        steps.push("@PreDestroy");
      }
    }
    // Declared after the class: its listeners run at close, once it is.
    const app: Application = await bootstrap({
      components: [Guard],
      config: { server: { "shutdown-timeout": 0 } },
    });
    const error = await aggregateOf(app.close());
    assert.equal(
      error.message,
      "Closing the application: @EventListener Guard.onClosing() still running on " +
        "ApplicationClosing after server.shutdown-timeout (0 s); the app closed all the same",
    );
    await turns();
    assert.deepEqual(steps, ["onClosing", "@PreDestroy", "onClosing ends"]);
  });
});

describe("what an async listener's log line shows", () => {
  it("no control character, line separator nor lone surrogate of the error message or the class names", async () => {
    class Evt {
      constructor(readonly text: string) {}
    }
    Object.defineProperty(Evt, "name", { value: "Evt\n\u001b[31m" });
    @Service()
    class Mail {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(Evt, { async: true })
      send(event: Evt): void {
        throw new Error(event.text);
      }
    }
    Object.defineProperty(Mail, "name", { value: "Mail\u2028" });
    // Every UTF-16 code unit, each alone (a surrogate is one of a pair nowhere).
    let text = "";
    for (let code = 0; code <= 0xffff; code++) text += `${String.fromCharCode(code)} `;
    const logger = memoryLogger();
    const app = await bootstrap({ components: [Mail], logger });
    await app.getBean(Mail).events.publishEvent(new Evt(text));
    await app.close();
    assert.equal(logger.lines.length, 1);
    const line = logger.lines[0][0] as string;
    assert.ok(
      line.startsWith(
        "Async @EventListener Mail\\u2028.send() threw on Evt\\u000a\\u001b[31m: \\u0000 \\u0001 ",
      ),
      JSON.stringify(line.slice(0, 100)),
    );
    const found = UNPRINTABLE.exec(line);
    assert.equal(found, null, `U+${found?.[0].charCodeAt(0).toString(16)} in the line`);
    for (const code of [0x0a, 0x0d, 0x1b, 0x7f, 0x85, 0x9f, 0x2028, 0x2029, 0xd800, 0xdfff]) {
      assert.ok(line.includes(`\\u${code.toString(16).padStart(4, "0")} `), code.toString(16));
    }
    // The rest as it was.
    for (const kept of ["A", "~", "\u00a0", "é", "€", "\ufffd", "\uffff"]) {
      assert.ok(line.includes(` ${kept} `), kept);
    }
  });
});

describe("publishEvent of an event whose prototype cannot be read", () => {
  it("returns a promise that rejects with what the Proxy's trap threw", async () => {
    let heard = 0;
    @Service()
    class Audit {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(Object)
      any(): void {
        heard++;
      }
    }
    const app = await bootstrap({ components: [Audit] });
    const trap = new Error("trap");
    const event = new Proxy({}, {
      getPrototypeOf() {
        throw trap;
      },
    });
    let published: Promise<void> | undefined;
    assert.doesNotThrow(() => published = app.getBean(Audit).events.publishEvent(event));
    assert.ok(published instanceof Promise);
    await assert.rejects(published, (e: unknown) => e === trap);
    assert.equal(heard, 1, "ApplicationStarted only");
    await app.close();
  });
});

describe("publishEvent once the app is closed", () => {
  it("delivers what the close publishes until the beans stop; then rejects, and reaches no listener", async () => {
    class Flush {
      constructor(readonly from: string) {}
    }
    class Late {}
    const heard: string[] = [];
    const refused: unknown[] = [];
    @Service()
    class Registry {
      @Autowired(ApplicationEventPublisher)
      events!: ApplicationEventPublisher;
      @EventListener(ApplicationClosing)
      async closing(): Promise<void> {
        await this.events.publishEvent(new Flush("ApplicationClosing"));
      }
      @EventListener(ApplicationClosing, { async: true })
      async closingLater(): Promise<void> {
        await this.events.publishEvent(new Flush("async ApplicationClosing"));
      }
      @EventListener(Flush)
      flush(event: Flush): void {
        heard.push(`flush from ${event.from}`);
      }
      @EventListener(Flush, { async: true })
      flushLater(event: Flush): void {
        heard.push(`flush later from ${event.from}`);
      }
      @EventListener(Late)
      late(): void {
        heard.push("late");
      }
      @EventListener(Late, { async: true })
      lateLater(): void {
        heard.push("late later");
      }
      @PreDestroy()
      async stop(): Promise<void> {
        heard.push("@PreDestroy");
        await this.events.publishEvent(new Late()).catch((e) => void refused.push(e));
      }
    }
    const app = await bootstrap({ components: [Registry] });
    const { events } = app.getBean(Registry);
    await app.close();
    await assert.rejects(events.publishEvent(new Late()), (e: unknown) => {
      refused.push(e);
      return true;
    });
    await turns();
    assert.deepEqual(heard.slice().sort(), [
      "@PreDestroy",
      "flush from ApplicationClosing",
      "flush from async ApplicationClosing",
      "flush later from ApplicationClosing",
      "flush later from async ApplicationClosing",
    ]);
    assert.equal(heard.at(-1), "@PreDestroy");
    assert.equal(refused.length, 2);
    for (const error of refused) {
      assert.ok(error instanceof Error);
      assert.equal(
        error.message,
        "the application is closed: its beans are stopping or stopped (app.close()); Late " +
          "reaches no listener",
      );
    }
    // What is not an event is refused as such.
    await assert.rejects(events.publishEvent(7 as unknown as object), TypeError);
  });
});
