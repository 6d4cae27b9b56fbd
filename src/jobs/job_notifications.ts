// PostgreSQL's LISTEN for the jobs enqueued by any process: one connection of the driver's own pool
// (`SqlClient.pool`, pg's) held while the app runs, whose notifications wake the worker of the
// queue at once, where it would otherwise wait for its next look. A connection lost is opened again
// after a growing wait; every worker looks at once when it is back, for what it missed meanwhile.
// The workers' own looks go on throughout: a notification only shortens a wait.
import type { ContextLogger } from "../context/class_record.ts";
import { Backoff } from "../runtime/backoff.ts";
import { type Clock, systemClock, type Timer } from "../runtime/clock.ts";
import { JOBS_CHANNEL } from "../sql/job_statements.ts";

/** What it needs of pg's `PoolClient`. */
interface ListeningClient {
  query(text: string): Promise<unknown>;
  on(
    event: "notification",
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeAllListeners(event: string): unknown;
  release(error?: Error | boolean): void;
}

/** What it needs of pg's `Pool`. */
export interface ListeningPool {
  connect(): Promise<ListeningClient>;
}

const RECONNECT = new Backoff({ delay: 500, multiplier: 2, maxDelay: 30_000, jitter: 250 });

/** The LISTEN of one app on its jobs' datasource. */
export class JobNotifications {
  readonly #pool: ListeningPool;
  // A queue's name, or `undefined`: every queue (after a reconnect).
  readonly #wake: (queue: string | undefined) => void;
  readonly #logger: ContextLogger;
  #client: ListeningClient | undefined;
  readonly #gone = new WeakSet<ListeningClient>();
  readonly #clock: Clock;
  #timer: Timer | undefined;
  #failures = 0;
  #started = false;
  #closed = false;

  constructor(
    pool: ListeningPool,
    wake: (queue: string | undefined) => void,
    logger: ContextLogger,
    clock: Clock = systemClock,
  ) {
    this.#pool = pool;
    this.#wake = wake;
    this.#logger = logger;
    this.#clock = clock;
  }

  /** Opens the listening connection, in the background; a second call does nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#connect();
  }

  /** Gives the connection back and opens no other. */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined && !this.#gone.has(client)) {
      this.#gone.add(client);
      client.removeAllListeners("notification");
      // Not back to the pool's idle ones: it still listens.
      client.release(true);
    }
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    let client: ListeningClient | undefined;
    try {
      client = await this.#pool.connect();
      const held = client;
      held.on("error", (error) => this.#lost(held, error));
      held.on("notification", ({ channel, payload }) => {
        if (channel === JOBS_CHANNEL && payload !== undefined) this.#wake(payload);
      });
      await held.query(`LISTEN ${JOBS_CHANNEL}`);
      if (this.#closed) {
        this.#gone.add(held);
        return held.release(true);
      }
      this.#client = held;
      if (this.#failures > 0) this.#wake(undefined);
      this.#failures = 0;
    } catch (error) {
      this.#lost(client, error);
    }
  }

  // A client fails once: its query's rejection and its "error" event may both tell of it.
  #lost(client: ListeningClient | undefined, error: unknown): void {
    if (client !== undefined) {
      if (this.#gone.has(client)) return;
      this.#gone.add(client);
      client.removeAllListeners("notification");
      client.release(error instanceof Error ? error : true);
      if (this.#client === client) this.#client = undefined;
    }
    if (this.#closed || this.#timer !== undefined) return;
    this.#failures++;
    if (this.#failures === 1 || this.#failures % 20 === 0) {
      this.#logger.error(
        `jobs: lost the PostgreSQL connection that listens for new jobs (${this.#failures} ` +
          `time${this.#failures === 1 ? "" : "s"} in a row); the workers look every ` +
          "jobs.poll-interval meanwhile",
        error,
      );
    }
    this.#timer = this.#clock.after(RECONNECT.delayOf(this.#failures), () => {
      this.#timer = undefined;
      void this.#connect();
    });
  }
}
