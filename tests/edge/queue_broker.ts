// Cloudflare Queues' side of a queue binding, for the edge tests: workerd turns a producer
// binding's `send(body, { contentType, delaySeconds })` into `POST https://fake-host/message` to
// the service the binding names (the body serialized as its content type says, `X-Msg-Fmt`, and
// `X-Msg-Delay-Secs`); here each queue's service is a loopback HTTP server of this process, which
// keeps the messages. Delivery is the test's to call: the due messages of a queue, ten at most,
// are handed to the worker's `queue` handler, and its result applied as Cloudflare applies it (a
// message acknowledged is gone; one retried is due again after its delay, or goes to the queue's
// dead letters past `maxRetries`; one neither is acknowledged when the handler succeeded,
// retried when it threw). The broker's clock is its own, moved by `advance`.
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** A message the broker keeps. */
export interface BrokerMessage {
  readonly id: string;
  /** As the consumer will be given it: parsed JSON, text, or (any other format) the raw bytes. */
  readonly body: unknown;
  readonly contentType: string;
  /** Deliveries so far. */
  attempts: number;
  /** On the broker's clock, in ms. */
  dueAt: number;
  /** When it was sent, in ms since the epoch. */
  readonly timestamp: number;
}

/** A send the broker received: its queue, body, content type and delay. */
export interface Sent {
  readonly queue: string;
  readonly body: unknown;
  readonly contentType: string;
  readonly delaySeconds: number | undefined;
}

/** What workerd answers for a queue event delivered through a service binding. */
export interface QueueResult {
  readonly outcome: string;
  readonly ackAll: boolean;
  readonly retryBatch: { readonly retry: boolean; readonly delaySeconds?: number };
  readonly explicitAcks: readonly string[];
  readonly retryMessages: readonly { readonly msgId: string; readonly delaySeconds?: number }[];
}

/** A message as the delivery hands it to the worker. */
export interface Delivered {
  readonly id: string;
  readonly timestamp: number;
  readonly body: unknown;
  readonly attempts: number;
}

/** Queues served on loopback, with Cloudflare's delivery rules. */
export class QueueBroker {
  readonly #queues = new Map<string, BrokerMessage[]>();
  readonly #servers: Server[] = [];
  // Sends of a queue still to answer with a 500.
  readonly #failing = new Map<string, number>();
  /** Every send received, in order. */
  readonly sent: Sent[] = [];
  /** The queue's dead letter queue: messages retried past `maxRetries`. */
  readonly dead: BrokerMessage[] = [];
  readonly maxRetries: number;
  #clock = 0;
  #next = 1;

  constructor(maxRetries = 3) {
    this.maxRetries = maxRetries;
  }

  /** Serves `queue` on a loopback port of its own; resolves the port. */
  async serve(queue: string): Promise<number> {
    const server = createServer((request, response) => this.#receive(queue, request, response));
    this.#servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as { port: number }).port;
  }

  /** Keeps a message on `queue` as another producer would send it. */
  put(queue: string, body: unknown, contentType = "json"): BrokerMessage {
    const message: BrokerMessage = {
      id: (this.#next++).toString(16).padStart(32, "0"),
      body,
      contentType,
      attempts: 0,
      dueAt: this.#clock,
      timestamp: Date.now(),
    };
    this.#list(queue).push(message);
    return message;
  }

  /** The messages `queue` holds, due or not. */
  messages(queue: string): readonly BrokerMessage[] {
    return this.#list(queue);
  }

  /** Deletes every message of `queue`. */
  purge(queue: string): void {
    this.#list(queue).length = 0;
  }

  /** Moves the broker's clock on. */
  advance(ms: number): void {
    this.#clock += ms;
  }

  /** Answers the next `count` sends to `queue` with a 500. */
  failSends(queue: string, count: number): void {
    this.#failing.set(queue, count);
  }

  /**
   * Delivers the due messages of `queue` (ten at most) through `deliver`, and applies its
   * result; resolves it, with the messages delivered, or `undefined` when none was due.
   */
  async deliver(
    queue: string,
    deliver: (queue: string, messages: Delivered[]) => Promise<QueueResult>,
  ): Promise<{ result: QueueResult; delivered: BrokerMessage[] } | undefined> {
    const list = this.#list(queue);
    const delivered = list.filter((message) => message.dueAt <= this.#clock).slice(0, 10);
    if (delivered.length === 0) return undefined;
    for (const message of delivered) message.attempts++;
    const result = await deliver(
      queue,
      delivered.map(({ id, timestamp, body, attempts }) => ({ id, timestamp, body, attempts })),
    );
    const acked = new Set(result.explicitAcks);
    const retried = new Map(result.retryMessages.map((r) => [r.msgId, r.delaySeconds]));
    for (const message of delivered) {
      if (retried.has(message.id)) {
        this.#retry(queue, message, retried.get(message.id));
      } else if (acked.has(message.id) || result.ackAll) {
        this.#remove(queue, message);
      } else if (result.retryBatch.retry || result.outcome !== "ok") {
        this.#retry(queue, message, result.retryBatch.delaySeconds);
      } else {
        this.#remove(queue, message);
      }
    }
    return { result, delivered };
  }

  /** Stops the queues' servers. */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })
    ));
  }

  #retry(queue: string, message: BrokerMessage, delaySeconds: number | undefined): void {
    if (message.attempts > this.maxRetries) {
      this.#remove(queue, message);
      this.dead.push(message);
      return;
    }
    message.dueAt = this.#clock + (delaySeconds ?? 0) * 1000;
  }

  #remove(queue: string, message: BrokerMessage): void {
    const list = this.#list(queue);
    list.splice(list.indexOf(message), 1);
  }

  #list(queue: string): BrokerMessage[] {
    let list = this.#queues.get(queue);
    if (list === undefined) this.#queues.set(queue, list = []);
    return list;
  }

  async #receive(queue: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of request) chunks.push(chunk as Uint8Array);
    if (request.method !== "POST" || request.url !== "/message") {
      response.writeHead(404).end(`no ${request.method} ${request.url} here`);
      return;
    }
    const failing = this.#failing.get(queue) ?? 0;
    if (failing > 0) {
      this.#failing.set(queue, failing - 1);
      response.writeHead(500, {
        "cf-queues-error-code": "15000",
        "cf-queues-error-cause": "the broker is failing on purpose",
      }).end();
      return;
    }
    const bytes = Buffer.concat(chunks);
    const contentType = String(request.headers["x-msg-fmt"] ?? "v8");
    const delay = request.headers["x-msg-delay-secs"];
    const delaySeconds = delay === undefined ? undefined : Number(delay);
    const body = contentType === "json"
      ? JSON.parse(bytes.toString("utf8"))
      : contentType === "text"
      ? bytes.toString("utf8")
      : new Uint8Array(bytes);
    this.sent.push({ queue, body, contentType, delaySeconds });
    const message = this.put(queue, body, contentType);
    message.dueAt = this.#clock + (delaySeconds ?? 0) * 1000;
    const backlog = this.#list(queue);
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      metadata: { metrics: { backlogCount: backlog.length, backlogBytes: bytes.length } },
    }));
  }
}
