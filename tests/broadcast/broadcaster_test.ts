// The broadcaster of one process, without sockets: who gets what, the bound of a subscriber that
// does not take its messages, unsubscribing, and what it refuses.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Autowired, bootstrap, Service } from "../../mod.ts";
import { Broadcaster } from "../../broadcast.ts";
import { memoryLogger } from "../helpers.ts";

describe("Broadcaster", () => {
  it("gives each subscriber of a channel every message in order, and none of another's", async () => {
    const broadcaster = new Broadcaster();
    const one = broadcaster.subscribe("a");
    const two = broadcaster.subscribe("a");
    const other = broadcaster.subscribe("b");
    for (let n = 0; n < 5; n++) await broadcaster.publish("a", n);
    await broadcaster.publish("b", "b");
    for (const subscription of [one, two]) {
      const got = [];
      for (let n = 0; n < 5; n++) got.push((await subscription.next()).value?.data);
      assert.deepEqual(got, ["0", "1", "2", "3", "4"]);
    }
    assert.deepEqual((await other.next()).value, { data: '"b"' });
    assert.equal(broadcaster.subscribers("a"), 2);
    await one.return();
    assert.equal(broadcaster.subscribers("a"), 1);
    assert.deepEqual(await one.next(), { value: undefined, done: true });
  });

  it("hands a message to a subscriber that waits for one, and ends a for-await loop at return", async () => {
    const broadcaster = new Broadcaster();
    const seen: string[] = [];
    const loop = (async () => {
      for await (const event of broadcaster.subscribe("a")) {
        seen.push(event.data);
        if (seen.length === 2) break;
      }
    })();
    await broadcaster.publish("a", "x");
    await broadcaster.publish("a", "y");
    await loop;
    assert.deepEqual(seen, ['"x"', '"y"']);
    assert.equal(broadcaster.subscribers("a"), 0);
  });

  it("drops a subscriber past its bound, once, with a line naming the channel, and no other", async () => {
    const logger = memoryLogger();
    const broadcaster = new Broadcaster({ maxBuffered: 10, logger });
    const slow = broadcaster.subscribe("room\r\n[thaw] forged");
    const roomy = broadcaster.subscribe("room\r\n[thaw] forged", { maxBuffered: 1000 });
    await broadcaster.publish("room\r\n[thaw] forged", "12345678"); // one always fits
    assert.equal(logger.lines.length, 0);
    await broadcaster.publish("room\r\n[thaw] forged", "1");
    await broadcaster.publish("room\r\n[thaw] forged", "2");
    assert.deepEqual(logger.lines.map(([line]) => line), [
      '[thaw] Broadcaster: a subscriber of channel "room\\r\\n[thaw] forged" did not take its ' +
      "messages: 13 bytes waited, over 10 (thaw.broadcast.max-buffered): dropped",
    ]);
    assert.deepEqual(await slow.next(), { value: undefined, done: true });
    assert.equal(broadcaster.subscribers("room\r\n[thaw] forged"), 1);
    const got = [];
    for (let n = 0; n < 3; n++) got.push((await roomy.next()).value?.data);
    assert.deepEqual(got, ['"12345678"', '"1"', '"2"']);
  });

  it("refuses bad options, channels and data, naming what it is", async () => {
    const broadcaster = new Broadcaster();
    assert.throws(() => new Broadcaster({ maxBuffered: 0 }), /Broadcaster: maxBuffered must be/);
    assert.throws(
      () => new Broadcaster({ bound: 1 } as never),
      /Broadcaster.*bound/,
    );
    assert.throws(() => broadcaster.subscribe("a", { maxBuffered: 1.5 }), /maxBuffered/);
    assert.throws(() => broadcaster.subscribe(""), /a channel is a text of 1 to 1024/);
    assert.throws(() => broadcaster.socket(7 as never), /a channel is a text/);
    await assert.rejects(broadcaster.publish("a", undefined), /must have a JSON form/);
  });

  it("is the app's bean, made when one asks for it, ended with the app, its keys checked", async () => {
    @Service()
    class Ticker {
      @Autowired(Broadcaster)
      broadcaster!: Broadcaster;
    }
    const app = await bootstrap({ components: [Ticker] });
    const broadcaster = app.getBean(Broadcaster);
    assert.equal(app.getBean(Ticker).broadcaster, broadcaster);
    const feed = broadcaster.subscribe("a");
    await app.getBean(Ticker).broadcaster.publish("a", 1);
    await app.close();
    assert.deepEqual(await feed.next(), { value: { data: "1" }, done: false });
    assert.deepEqual(await feed.next(), { value: undefined, done: true });
    assert.equal(broadcaster.subscribers("a"), 0);
    assert.equal(broadcaster.subscribe("a").channel, "a");
    assert.equal(broadcaster.subscribers("a"), 0);
    await assert.rejects(broadcaster.publish("a", 1), /Broadcaster: closed/);
    await assert.rejects(
      bootstrap({ config: { thaw: { broadcast: { transport: "rabbit" } } } }),
      /thaw\.broadcast\.transport/,
    );
    await assert.rejects(
      bootstrap({ config: { thaw: { broadcast: { "max-bufered": 1 } } } }),
      /max-bufered/,
    );
  });

  it("reads its keys from text, as the environment gives them", async () => {
    const logger = memoryLogger();
    @Service()
    class Ticker {
      @Autowired(Broadcaster)
      broadcaster!: Broadcaster;
    }
    const app = await bootstrap({
      components: [Ticker],
      config: { thaw: { broadcast: { "max-buffered": "${MAX}" } } },
      env: { MAX: "4" },
      logger,
    });
    const broadcaster = app.getBean(Broadcaster);
    const slow = broadcaster.subscribe("a");
    await broadcaster.publish("a", "1");
    await broadcaster.publish("a", "2");
    // Dropped with what waited for it: 6 bytes, over the 4 the text said.
    assert.deepEqual(await slow.next(), { value: undefined, done: true });
    assert.match(String(logger.lines[0]?.[0]), /6 bytes waited, over 4 /);
    await app.close();
  });
});
