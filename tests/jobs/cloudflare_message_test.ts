import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  againBodyOf,
  deadBodyOf,
  delayOf,
  MAX_DELAY_S,
  MAX_JOB_BYTES,
  MAX_MESSAGE_BYTES,
  outgoingOf,
  readJob,
  sizeOf,
} from "../../src/jobs/cloudflare_message.ts";
import { propertyOptions } from "../property.ts";

const NOW = 1_780_000_000_000;
const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// A message as the runtime gives it, with the body a JSON content type would: parsed JSON.
const delivered = (body: unknown, attempts = 1) => ({
  id: "9f2c4e",
  timestamp: new Date(NOW - 1000),
  body: JSON.parse(JSON.stringify(body)),
  attempts,
});

const json = fc.jsonValue();

// The message of a job with a trace and `attempts`, enqueued NOW with no delay.
const traced = (payload: string, attempts: number, id: string) =>
  outgoingOf({ payload, delayMs: 0, attempts }, id, TRACE, NOW, "here");

describe("a job as a Cloudflare Queues message", () => {
  it("reads back what it sent: payload, id, attempts, trace and due time", () => {
    fc.assert(
      fc.property(
        json,
        fc.uuid(),
        fc.option(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { nil: undefined }),
        fc.option(fc.constant(TRACE), { nil: undefined }),
        fc.integer({ min: -86_400_000, max: 10 * 86_400_000 }),
        fc.integer({ min: 1, max: 100 }),
        (payload, id, attempts, trace, delayMs, delivery) => {
          const text = JSON.stringify(payload);
          const sent = outgoingOf({ payload: text, delayMs, attempts }, id, trace, NOW, "here");
          const { job, due, refused } = readJob("mail", delivered(sent.body, delivery));
          assert.equal(refused, undefined);
          assert.deepEqual(JSON.parse(job.payload), JSON.parse(text));
          assert.equal(job.id, id);
          assert.equal(job.queue, "mail");
          assert.equal(job.attempt, delivery);
          assert.equal(job.attempts, attempts);
          assert.equal(job.trace, trace);
          assert.equal(job.enqueuedAt.getTime(), NOW);
          assert.equal(job.lease, "9f2c4e");
          // A delay the queue can give is the message's; only a longer one keeps a due time.
          assert.equal(due, delayMs > MAX_DELAY_S * 1000 ? NOW + delayMs : undefined);
          assert.equal(
            sent.delaySeconds,
            Math.min(MAX_DELAY_S, Math.max(0, Math.ceil(delayMs / 1000))),
          );
        },
      ),
      propertyOptions(300),
    );
  });

  it("gives each delay whole seconds, never less than asked, at most 12 hours", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e11 }), (delayMs) => {
        const { delaySeconds, due } = delayOf(delayMs, NOW);
        assert.ok(Number.isInteger(delaySeconds) && delaySeconds >= 0);
        assert.ok(delaySeconds <= MAX_DELAY_S);
        if (due === undefined) assert.ok(delaySeconds * 1000 >= delayMs);
        else assert.equal(due, NOW + delayMs);
      }),
      propertyOptions(),
    );
    assert.deepEqual(delayOf(43_200_000, NOW), { delaySeconds: 43_200 });
    assert.deepEqual(delayOf(43_200_001, NOW), { delaySeconds: 43_200, due: NOW + 43_200_001 });
    assert.deepEqual(delayOf(1, NOW), { delaySeconds: 1 });
    assert.deepEqual(delayOf(-5, NOW), { delaySeconds: 0 });
  });

  it("takes another producer's body as the payload, the message's id and time as the job's", () => {
    fc.assert(
      fc.property(json, (body) => {
        const message = delivered(body);
        const { job, refused, due } = readJob("mail", message);
        // Only an object of exactly `thaw` (an object) and `payload` is an envelope.
        const envelope = typeof body === "object" && body !== null && !Array.isArray(body) &&
          Object.keys(body).length === 2 && "thaw" in body && "payload" in body &&
          typeof body.thaw === "object" && body.thaw !== null && !Array.isArray(body.thaw);
        fc.pre(!envelope);
        assert.equal(refused, undefined);
        assert.deepEqual(JSON.parse(job.payload), message.body);
        assert.equal(job.id, "9f2c4e");
        assert.equal(job.enqueuedAt.getTime(), NOW - 1000);
        assert.equal(job.attempts, undefined);
        assert.equal(due, undefined);
      }),
      propertyOptions(300),
    );
  });

  it("refuses a body JSON cannot hold, to be dead untried", () => {
    for (const body of [new Map([["a", 1]]), new Date(0), undefined, new Uint8Array([1]), 1n]) {
      const { refused } = readJob("mail", { ...delivered(null), body });
      assert.match(refused ?? "", /^its body is not JSON \(the message: the payload must be JSON/);
    }
    // Text is JSON: a string payload.
    const text = readJob("mail", { ...delivered(null), body: "hello" });
    assert.equal(text.job.payload, '"hello"');
  });

  it("keeps out of logs and spans what an envelope holds that no producer of Thaw's writes", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 200 }),
        fc.string({ unit: "binary", maxLength: 80 }),
        fc.anything(),
        (id, trace, due) => {
          const body = { thaw: { id, trace, due, attempts: -1, enqueuedAt: "x" }, payload: 1 };
          const { job, due: read } = readJob("mail", { ...delivered(null), body });
          assert.ok(job.id === "9f2c4e" || (job.id === id && /^[A-Za-z0-9_-]{1,128}$/.test(id)));
          assert.ok(job.trace === undefined || job.trace === trace);
          if (job.trace !== undefined) assert.match(job.trace, /^[0-9a-f-]{55}$/);
          assert.ok(read === undefined || (typeof read === "number" && Number.isFinite(read)));
          assert.equal(job.attempts, undefined);
          assert.equal(job.enqueuedAt.getTime(), NOW - 1000);
          assert.equal(job.payload, "1");
        },
      ),
      propertyOptions(300),
    );
  });

  it("refuses a job over what a message holds, or due past any date, naming the queue", () => {
    const envelopeBytes = sizeOf(
      outgoingOf(
        { payload: '""', delayMs: 0, attempts: undefined },
        "id",
        undefined,
        NOW,
        "here",
      ).body,
    );
    const sized = (length: number) => JSON.stringify("x".repeat(length - envelopeBytes));
    const job = (payload: string) => ({ payload, delayMs: 0, attempts: undefined });
    assert.equal(
      sizeOf(outgoingOf(job(sized(MAX_JOB_BYTES)), "id", undefined, NOW, "here").body),
      MAX_JOB_BYTES,
    );
    assert.throws(
      () => outgoingOf(job(sized(MAX_JOB_BYTES + 1)), "id", undefined, NOW, "here"),
      (error: Error) =>
        error instanceof TypeError &&
        error.message === `here: a job of ${MAX_JOB_BYTES + 1} bytes (payload and envelope, as ` +
            `JSON) is over the ${MAX_JOB_BYTES} a job on Cloudflare Queues may take (a message ` +
            "holds 128 KB)",
    );
    // Within what Cloudflare takes, its own metadata counted in.
    assert.ok(MAX_JOB_BYTES < MAX_MESSAGE_BYTES && MAX_MESSAGE_BYTES <= 128_000 - 100);
    assert.throws(
      () =>
        outgoingOf(
          { payload: "1", delayMs: Number.MAX_SAFE_INTEGER, attempts: undefined },
          "id",
          undefined,
          NOW,
          "here",
        ),
      /^TypeError: here: a delay of 9007199254740991 ms ends past the latest date a job can be due$/,
    );
    // Characters JSON escapes count as the bytes they take.
    const escaped = JSON.stringify("\u0001".repeat(22_000));
    assert.throws(() => outgoingOf(job(escaped), "id", undefined, NOW, "here"));
  });

  it("counts the runs a job had before a message Thaw sent again, not its deliveries", () => {
    fc.assert(
      fc.property(
        json,
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 100 }),
        (payload, delivery, next) => {
          const sent = traced(JSON.stringify(payload), 5, "id-2");
          const first = readJob("mail", delivered(sent.body, delivery));
          assert.equal(first.job.attempt, delivery);
          // Delivery `delivery` did not run it: the next message's delivery `next` is run
          // delivery - 1 + next.
          const again = readJob("mail", delivered(againBodyOf(first), next));
          assert.equal(again.job.attempt, delivery - 1 + next);
          assert.equal(again.job.id, "id-2");
          assert.equal(again.job.attempts, 5);
          assert.equal(again.job.trace, TRACE);
          assert.equal(again.job.payload, first.job.payload);
          assert.equal(again.job.enqueuedAt.getTime(), NOW);
        },
      ),
      propertyOptions(200),
    );
    // Another producer's body is put in an envelope of the message's id and time.
    const foreign = readJob("mail", delivered({ to: "grace" }, 2));
    const wrapped = readJob("mail", delivered(againBodyOf(foreign), 1));
    assert.equal(wrapped.job.id, "9f2c4e");
    assert.equal(wrapped.job.attempt, 2);
    assert.equal(wrapped.job.payload, '{"to":"grace"}');
  });

  it("reads a time no Date holds, or a run count no integer column holds, as absent", () => {
    for (const value of [1e300, -1e300, 8.64e15 + 1, Infinity, NaN, "1", null]) {
      const body = { thaw: { id: "a", enqueuedAt: value, due: value }, payload: 1 };
      const { job, due } = readJob("mail", delivered(body));
      assert.equal(job.enqueuedAt.getTime(), NOW - 1000, String(value));
      assert.equal(due, undefined, String(value));
    }
    for (const value of [-1, 2 ** 31, 1.5, "2", null, Infinity]) {
      const body = { thaw: { id: "a", tried: value, attempts: value }, payload: 1 };
      const { job } = readJob("mail", delivered(body, 3));
      assert.equal(job.attempt, 3, String(value));
      assert.equal(job.attempts, undefined, String(value));
    }
  });

  it("keeps a dead job within a message, its error shortened, whatever the error holds", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 1000 }),
        fc.string({ unit: "binary", maxLength: 200_000 }),
        fc.integer({ min: 1, max: 50 }),
        (text, error, runs) => {
          const sent = traced(JSON.stringify(text), 7, "id-1");
          const read = readJob("mail", delivered(sent.body, runs));
          const dead = deadBodyOf(read, runs, error);
          assert.ok(sizeOf(dead) <= MAX_MESSAGE_BYTES, `${sizeOf(dead)} bytes`);
          assert.equal(dead.payload, text);
          assert.equal(dead.thaw.runs, runs);
          assert.equal(dead.thaw.id, "id-1");
          assert.equal(dead.thaw.attempts, 7);
          assert.equal(dead.thaw.trace, TRACE);
          assert.ok(error.startsWith(dead.thaw.error ?? ""));
          // Read back from the dead queue, it is the same job.
          const again = readJob("mail-dead", delivered(dead));
          assert.equal(again.job.id, "id-1");
          assert.equal(again.job.payload, JSON.stringify(text));
        },
      ),
      propertyOptions(50),
    );
    // A short error is kept whole; a long one of any characters is cut to fit beside the payload.
    const read = readJob("mail", delivered({ to: 1 }));
    const big = readJob("mail", delivered({ thaw: { id: "b" }, payload: "p".repeat(100_000) }));
    for (const unit of ["x", "\u0001", "\ud800", "\u{1F600}", '"', "\u2028"]) {
      const dead = deadBodyOf(big, 3, unit.repeat(200_000));
      assert.ok(
        sizeOf(dead) <= MAX_MESSAGE_BYTES,
        `${JSON.stringify(unit)}: ${sizeOf(dead)} bytes`,
      );
      assert.ok((dead.thaw.error ?? "").length > 3000, JSON.stringify(unit));
    }
    assert.equal(deadBodyOf(read, 1, "Error: boom").thaw.error, "Error: boom");
    assert.equal(deadBodyOf(read, 1, undefined).thaw.error, undefined);
    // A job as large as an enqueue takes keeps its payload, and some of its error.
    const largest = traced(JSON.stringify("y".repeat(MAX_JOB_BYTES - 200)), 2, "id-3");
    assert.ok(sizeOf(largest.body) <= MAX_JOB_BYTES);
    const kept = deadBodyOf(readJob("mail", delivered(largest.body, 2)), 2, "E".repeat(5000));
    assert.ok(sizeOf(kept) <= MAX_MESSAGE_BYTES, `${sizeOf(kept)} bytes`);
    assert.equal(kept.payload, "y".repeat(MAX_JOB_BYTES - 200));
    assert.match(kept.thaw.error ?? "", /^E{10,}$/);
    // Another producer's body at the queue's limit cannot go with an envelope: left out, said so.
    const full = readJob("mail", delivered("z".repeat(127_990)));
    const dropped = deadBodyOf(full, 1, "Error: boom");
    assert.ok(sizeOf(dropped) <= MAX_MESSAGE_BYTES);
    assert.equal(dropped.payload, null);
    assert.match(
      dropped.thaw.error ?? "",
      /^its payload \(\d+ bytes with the envelope\) was too large to keep here; Error: boom$/,
    );
  });
});
