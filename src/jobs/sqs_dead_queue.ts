// The dead jobs of SQS queues, each queue's in `<queue>-dead`: listed (a look that leaves them
// where they are), and found by id for a retry or a delete. SQS cannot find a message by id: a
// search receives the dead queue's messages, holding each invisible while it looks, and makes
// those it passed visible again once it ended. Searches run one at a time: one would not see the
// messages another holds. A queue that does not exist holds no dead jobs: a read makes none.
import {
  ChangeMessageVisibilityBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { DeadJob } from "./job_store.ts";
import { jobId, textOf, thawState, timeOf } from "./sqs_attributes.ts";
import type { SqsQueueUrls } from "./sqs_queue_urls.ts";

// Receives a search makes per dead queue at most (10 messages each).
const SEARCH_RECEIVES = 50;
// Empty answers in a row that end a search: SQS answers from a sample of its servers.
const EMPTY_ANSWERS = 3;
// How long a message looked at stays invisible, in seconds, should the search die meanwhile.
const LOOK_S = 30;

/** The queue of `queue`'s dead jobs. */
export function deadQueue(queue: string): string {
  return `${queue}-dead`;
}

/** A dead job's message, held invisible, and where it is. */
export interface FoundDead {
  readonly queue: string;
  readonly url: string;
  readonly message: Message;
}

/** The dead queues of the queues a store knows. */
export class SqsDeadQueues {
  readonly #client: SQSClient;
  readonly #urls: SqsQueueUrls;
  // The search under way, if any: the next one starts once it ended.
  #searching: Promise<unknown> = Promise.resolve();

  /** `urls` answers the dead queues' URLs, making none. */
  constructor(client: SQSClient, urls: SqsQueueUrls) {
    this.#client = client;
    this.#urls = urls;
  }

  /** The dead jobs of `queues`, up to 10 each, the latest to die first, `limit` at most. */
  async list(queues: readonly string[], limit: number): Promise<DeadJob[]> {
    const found = await Promise.all(queues.map(async (queue) => {
      const url = await this.#urls.existing(deadQueue(queue));
      if (url === undefined) return [];
      try {
        const answer = await this.#client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 0,
            WaitTimeSeconds: 0,
            MessageAttributeNames: ["All"],
            MessageSystemAttributeNames: ["SentTimestamp"],
          }),
        );
        return (answer.Messages ?? []).map((message) => deadJob(queue, message));
      } catch (error) {
        if (this.#urls.missing(error)) return [];
        throw error;
      }
    }));
    return found.flat().sort((a, b) => b.diedAt.localeCompare(a.diedAt)).slice(0, limit);
  }

  /** Dead job `id` among the dead queues of `queues`, held invisible; `undefined` if not found. */
  find(queues: readonly string[], id: string): Promise<FoundDead | undefined> {
    const search = this.#searching.then(() => this.#search(queues, id));
    this.#searching = search.catch(() => {});
    return search;
  }

  async #search(queues: readonly string[], id: string): Promise<FoundDead | undefined> {
    for (const queue of queues) {
      const url = await this.#urls.existing(deadQueue(queue));
      if (url === undefined) continue;
      const passed: Message[] = [];
      try {
        for (let receives = 0, empty = 0; receives < SEARCH_RECEIVES; receives++) {
          const answer = await this.#client.send(
            new ReceiveMessageCommand({
              QueueUrl: url,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: LOOK_S,
              // Long polling asks every server, not a sample.
              WaitTimeSeconds: 1,
              MessageAttributeNames: ["All"],
            }),
          );
          const messages = answer.Messages ?? [];
          if (messages.length === 0) {
            if (++empty === EMPTY_ANSWERS) break;
            continue;
          }
          empty = 0;
          const match = messages.find((message) => jobId(message) === id);
          passed.push(...messages.filter((message) => message !== match));
          if (match !== undefined) return { queue, url, message: match };
        }
      } catch (error) {
        // Deleted since its URL was kept: no dead job there.
        if (!this.#urls.missing(error)) throw error;
      } finally {
        // What it passed comes back after its look all the same: a failure here must not hide
        // the search's own answer or error.
        await this.#showAgain(url, passed).catch(() => {});
      }
    }
    return undefined;
  }

  async #showAgain(url: string, messages: readonly Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      await this.#client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: messages.slice(i, i + 10).map((message, n) => ({
            Id: `m${n}`,
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
    }
  }
}

// What another sender wrote is read as Thaw would have written it, or not at all.
function deadJob(queue: string, message: Message): DeadJob {
  const sent = Number(message.Attributes?.SentTimestamp ?? 0);
  const died = timeOf(message, "thaw-died") ?? (Number.isFinite(sent) ? sent : 0);
  const state = thawState(message);
  return {
    id: jobId(message),
    queue,
    attempt: typeof state === "string" ? 0 : state.runs,
    diedAt: new Date(died).toISOString(),
    error: textOf(message, "thaw-error"),
  };
}
