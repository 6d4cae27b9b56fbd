import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type ClientFactory, PostgresClients } from "../../src/sql/postgres_clients.ts";
import { DataError } from "../../src/sql/data_error.ts";
import { propertyOptions } from "../property.ts";
import { until } from "../runtime/raw_client.ts";

interface Fake {
  readonly id: number;
}

/** A factory of fake connections, recording what it opened and closed; `refuse` fails the opens. */
function fakes(): ClientFactory<Fake> & {
  opened: Fake[];
  closed: Fake[];
  refuse: Error | undefined;
} {
  const made = {
    opened: [] as Fake[],
    closed: [] as Fake[],
    refuse: undefined as Error | undefined,
    open(): Promise<Fake> {
      if (made.refuse !== undefined) return Promise.reject(made.refuse);
      const client = { id: made.opened.length + 1 };
      made.opened.push(client);
      return Promise.resolve(client);
    },
    close(client: Fake): void {
      made.closed.push(client);
    },
  };
  return made;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

function reason(error: unknown): string {
  assert.ok(error instanceof DataError, String(error));
  return error.reason;
}

describe("postgres_clients", () => {
  it("opens at most max-size; callers waiting are served first come, first served", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 2, idleTimeoutMs: 60_000 }, factory);
    const a = await pool.acquire(60_000);
    const b = await pool.acquire(60_000);
    const served: string[] = [];
    const first = pool.acquire(60_000).then((c) => (served.push("first"), c));
    const second = pool.acquire(60_000).then((c) => (served.push("second"), c));
    await turn();
    assert.equal(factory.opened.length, 2);
    pool.release(b);
    assert.equal(await first, b);
    pool.release(a);
    assert.equal(await second, a);
    assert.deepEqual(served, ["first", "second"]);
    assert.equal(pool.totalCount, 2);
    pool.release(a);
    pool.release(b);
    await pool.close();
  });

  it("hands out the idle connection given back last, at once", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 3, idleTimeoutMs: 60_000 }, factory);
    const [a, b] = [await pool.acquire(60_000), await pool.acquire(60_000)];
    pool.release(a);
    pool.release(b);
    assert.equal(pool.idleCount, 2);
    assert.equal(pool.takeIdle(), b);
    pool.release(b);
    await pool.close();
    assert.deepEqual(new Set(factory.closed), new Set([a, b]));
  });

  it("fails a caller past its timeout, naming acquire-timeout; the connection it missed stays", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 1, idleTimeoutMs: 60_000 }, factory);
    const a = await pool.acquire(60_000);
    const error = await pool.acquire(20, 5_000).then(() => undefined, (e: unknown) => e);
    assert.equal(reason(error), "timeout");
    assert.match((error as Error).message, /within 5000 ms \(pool\.acquire-timeout\)/);
    pool.release(a);
    assert.equal(pool.idleCount, 1);
    assert.equal(await pool.acquire(60_000), a);
    pool.release(a);
    await pool.close();
  });

  it("fails the longest waiting caller with a connect error, and opens again for the next", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 1, idleTimeoutMs: 60_000 }, factory);
    factory.refuse = new Error("refused");
    await assert.rejects(pool.acquire(60_000), /refused/);
    assert.equal(pool.totalCount, 0);
    factory.refuse = undefined;
    const a = await pool.acquire(60_000);
    assert.equal(pool.totalCount, 1);
    pool.release(a);
    await pool.close();
  });

  it("closes a connection given back broken, and opens another for a waiting caller", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 1, idleTimeoutMs: 60_000 }, factory);
    const a = await pool.acquire(60_000);
    const next = pool.acquire(60_000);
    pool.release(a, true);
    const b = await next;
    assert.notEqual(b, a);
    assert.deepEqual(factory.closed, [a]);
    pool.release(b);
    await pool.close();
  });

  it("closes an idle connection that failed on its own; a held one only when given back", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 2, idleTimeoutMs: 60_000 }, factory);
    const [a, b] = [await pool.acquire(60_000), await pool.acquire(60_000)];
    pool.release(a);
    pool.lost(a);
    pool.lost(b);
    assert.deepEqual(factory.closed, [a]);
    assert.equal(pool.totalCount, 1);
    pool.release(b, true);
    assert.equal(pool.totalCount, 0);
    await pool.close();
  });

  it("closes the connections idle past idle-timeout with one timer", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 2, idleTimeoutMs: 50 }, factory);
    const [a, b] = [await pool.acquire(60_000), await pool.acquire(60_000)];
    pool.release(a);
    pool.release(b);
    await until(() => Promise.resolve(factory.closed.length === 2), "both idle closed");
    assert.equal(pool.idleCount, 0);
    assert.equal(pool.totalCount, 0);
    await pool.close();
  });

  it("close fails the waiting callers, ends the idle ones and waits for those held", async () => {
    const factory = fakes();
    const pool = new PostgresClients({ name: "db", maxSize: 2, idleTimeoutMs: 60_000 }, factory);
    const [a, b] = [await pool.acquire(60_000), await pool.acquire(60_000)];
    pool.release(a);
    const order: string[] = [];
    // b held, a idle: a waiting caller gets a; one more waits.
    assert.equal(await pool.acquire(60_000), a);
    const waiting = pool.acquire(60_000);
    const closing = pool.close().then(() => order.push("closed"));
    assert.equal(reason(await waiting.then(() => undefined, (e: unknown) => e)), "closed");
    assert.equal(reason(await pool.acquire(60_000).then(() => undefined, (e) => e)), "closed");
    await turn();
    order.push("released");
    pool.release(a);
    pool.release(b);
    await closing;
    assert.deepEqual(order, ["released", "closed"]);
    assert.deepEqual(factory.closed, [a, b]);
  });

  it("never opens more than max-size, and serves or fails every caller", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.constantFrom("take", "give", "break", "refuse", "accept"), { maxLength: 40 }),
        async (maxSize, steps) => {
          const factory = fakes();
          const pool = new PostgresClients({ name: "db", maxSize, idleTimeoutMs: 60_000 }, factory);
          const held: Fake[] = [];
          const settled: Promise<unknown>[] = [];
          for (const step of steps) {
            if (step === "take") {
              settled.push(pool.acquire(60_000).then((c) => held.push(c), () => {}));
            } else if (step === "refuse") factory.refuse = new Error("refused");
            else if (step === "accept") factory.refuse = undefined;
            else if (held.length > 0) pool.release(held.shift()!, step === "break");
            await turn();
            assert.ok(factory.opened.length - factory.closed.length <= maxSize);
            assert.ok(pool.totalCount <= maxSize);
          }
          factory.refuse = undefined;
          // Given back one by one, every caller is served.
          while (held.length > 0 || pool.totalCount > pool.idleCount) {
            while (held.length > 0) pool.release(held.shift()!);
            await turn();
          }
          await Promise.all(settled);
          await pool.close();
          assert.equal(factory.opened.length, factory.closed.length);
        },
      ),
      propertyOptions(100),
    );
  });
});
