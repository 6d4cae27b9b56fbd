// One message a worker took from SQS, while its run lasts: its window extended, never past its
// lease, and stopped (with any extension in flight waited for) while the run's end is written, so
// that no extension lands after a retry's wait and cuts it short.
import { ChangeMessageVisibilityCommand, type Message, type SQSClient } from "@aws-sdk/client-sqs";
import type { TakenJob } from "./job_store.ts";

/** A taken message, its job, and the extension of its window. */
export class HeldMessage {
  readonly url: string;
  readonly message: Message;
  readonly job: TakenJob;
  // Set once its next message was sent: an end tried again deletes, and sends nothing twice.
  sent = false;
  readonly #client: SQSClient;
  readonly #windowS: number;
  readonly #leaseEnds: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #extending: Promise<void> | undefined;
  #paused = false;

  /**
   * Holds `message` of the queue at `url` for `leaseMs` from now, in windows of `windowS`
   * seconds, each extended a third of a window before it ends.
   */
  constructor(
    client: SQSClient,
    taken: { url: string; message: Message; job: TakenJob },
    windowS: number,
    leaseMs: number,
  ) {
    this.#client = client;
    this.url = taken.url;
    this.message = taken.message;
    this.job = taken.job;
    this.#windowS = windowS;
    this.#leaseEnds = Date.now() + leaseMs;
    if (leaseMs > windowS * 1000) {
      this.#timer = setInterval(() => this.#extend(), (windowS * 1000) / 3);
    }
  }

  /** How long each window is, in seconds. */
  get windowSeconds(): number {
    return this.#windowS;
  }

  /** When its lease ends (ms since the epoch): the message is another run's to take then. */
  get leaseEnds(): number {
    return this.#leaseEnds;
  }

  /** Stops extending while its end is written; resolves once no extension is in flight. */
  async pause(): Promise<void> {
    this.#paused = true;
    await this.#extending;
  }

  /** Extends again: writing its end failed, and the worker tries again within the lease. */
  resume(): void {
    this.#paused = false;
  }

  /** Extends no more. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #extend(): void {
    const seconds = Math.min(this.#windowS, Math.ceil((this.#leaseEnds - Date.now()) / 1000));
    if (seconds <= 0) {
      // Its lease ended: the message becomes visible as its last window ends.
      this.stop();
      return;
    }
    if (this.#paused || this.#extending !== undefined) return;
    this.#extending = this.#client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.url,
        ReceiptHandle: this.message.ReceiptHandle,
        VisibilityTimeout: seconds,
      }),
    ).then(
      () => {},
      () => {
        // Tried again at the next tick; a window that ended gives the job to another run.
      },
    ).finally(() => {
      this.#extending = undefined;
    });
  }
}
