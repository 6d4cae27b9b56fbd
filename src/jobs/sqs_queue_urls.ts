// The URLs of a store's SQS queues, by name, kept once known. A write makes its queue when there is
// none (keeping its messages SQS's longest, 14 days; an app whose role may not create queues has
// them made beforehand, with the same names); a read makes none. A queue deleted since its URL was
// kept is told by the error of a call to it, and every URL is then looked up again.
import { CreateQueueCommand, GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { isMissingQueue } from "./sqs_errors.ts";

// How long SQS keeps a message: its longest, 14 days (a dead job among them).
const RETENTION_S = "1209600";

/** The queue URLs of one SQS endpoint. */
export class SqsQueueUrls {
  readonly #client: SQSClient;
  readonly #urls = new Map<string, Promise<string>>();

  constructor(client: SQSClient) {
    this.#client = client;
  }

  /** The queue's URL, the queue made when it does not exist. */
  made(queue: string): Promise<string> {
    let url = this.#urls.get(queue);
    if (url === undefined) {
      url = (async () =>
        await this.existing(queue) ??
          (await this.#client.send(
            new CreateQueueCommand({
              QueueName: queue,
              Attributes: { MessageRetentionPeriod: RETENTION_S },
            }),
          )).QueueUrl as string)();
      // A failure is not kept: the next call asks again.
      url.catch(() => this.#urls.delete(queue));
      this.#urls.set(queue, url);
    }
    return url;
  }

  /** The queue's URL, or `undefined` when there is no such queue. */
  async existing(queue: string): Promise<string | undefined> {
    const known = this.#urls.get(queue);
    // One being made that fails (a role that may not create queues) is looked up here.
    if (known !== undefined) {
      const url = await known.catch(() => undefined);
      if (url !== undefined) return url;
    }
    try {
      const found = await this.#client.send(new GetQueueUrlCommand({ QueueName: queue }));
      const url = found.QueueUrl as string;
      if (!this.#urls.has(queue)) this.#urls.set(queue, Promise.resolve(url));
      return url;
    } catch (error) {
      if (isMissingQueue(error)) return undefined;
      throw error;
    }
  }

  /** Whether `error` says a queue is not there; if so, every URL kept is looked up again. */
  missing(error: unknown): boolean {
    if (!isMissingQueue(error)) return false;
    this.#urls.clear();
    return true;
  }
}
