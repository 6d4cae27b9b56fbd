// The brokers a producer knows of and those it could not reach: what its health check names when
// no broker answers, and the connections it drops after a request timed out.
import type { Buffer } from "node:buffer";
import type { Producer } from "@platformatic/kafka";
import { holdsTimeout } from "./request_timeout.ts";

/** A broker's address, as the client's events give it. */
interface Broker {
  readonly host: string;
  readonly port: number;
}

const at = (broker: Broker): string => `${broker.host}:${broker.port}`;

/** The brokers of one producer, followed through its client's events. */
export class ProducerBrokers {
  readonly #producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  // The brokers (host:port) whose last connection attempt failed: what the health check names.
  readonly #unreachable = new Set<string>();
  // Every broker the producer knows of, by host:port: the bootstrap ones and the cluster's.
  readonly #brokers = new Map<string, Broker>();

  constructor(producer: Producer<Buffer, Buffer, Buffer, Buffer>) {
    this.#producer = producer;
    // Connected or not: a connection of each is closed after a request timed out.
    producer.on("client:broker:connect", ({ broker }) => this.#brokers.set(at(broker), broker));
    producer.on("client:broker:failed", ({ broker }) => this.#unreachable.add(at(broker)));
    producer.on("client:broker:connect", ({ broker }) => this.#unreachable.delete(at(broker)));
  }

  /**
   * The client reads a late answer to a request it timed out without consuming its bytes, and
   * misreads every answer after it on that connection (a request whose answer is never matched
   * waits out its whole timeout: 30 s after a broker woke up). As Java's client does, the
   * connections are closed after a request timed out (`error` holds one): the next try goes on
   * new ones.
   */
  dropConnectionsAfterTimeout(error: unknown): void {
    if (!holdsTimeout(error)) return;
    const pool = this.#producer.connections;
    for (const broker of this.#brokers.values()) {
      pool.getEstablishedConnection(broker)?.close(() => {});
    }
  }

  /**
   * The error of a health check no broker answered within `ms`: the bootstrap brokers named, and
   * those it could not connect to.
   */
  noAnswer(ms: number, bootstrapBrokers: readonly string[]): Error {
    const failed = [...this.#unreachable];
    return new Error(
      `no broker answered within ${ms} ms (kafka.bootstrap-servers: ` +
        `${bootstrapBrokers.join(", ")}); ` +
        (failed.length > 0
          ? `connecting to ${failed.join(", ")} failed`
          : "connected, but no answer came"),
    );
  }
}
