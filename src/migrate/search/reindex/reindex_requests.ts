import { errorDetail, type SearchClient, type SearchResponse } from "../http/search_client.ts";
import { type Send, StepError } from "./reindex_step.ts";
import { definedFields } from "../../../defined_fields.ts";

/** The settings that lift a write block. */
export const UNBLOCK: { readonly "index.blocks.write": null } = { "index.blocks.write": null };

/**
 * How a reindex sends its requests. The steps' requests are noted as they go, so that a failure
 * names the last one a step sent; what runs once a step failed (the rollback, the read of where
 * the alias is, the release before a refusal) is sent aside, unnoted and never aborted.
 */
export class ReindexRequests {
  readonly #client: SearchClient;
  // `METHOD /path` of the last request a step sent: the one its failure names.
  #last = "";

  constructor(client: SearchClient) {
    this.#client = client;
  }

  /** `METHOD /path` of the last request a step sent; empty before the first. */
  get last(): string {
    return this.#last;
  }

  /** Sends the steps' requests, each noted as the last, aborted by `signal`. */
  steps(signal: AbortSignal): Send {
    return this.#sender(signal, true);
  }

  /** Sends what runs once a step failed, or a read that does not count as the step's. */
  aside(): Send {
    return this.#sender(undefined, false);
  }

  /** Cleaning up runs after Ctrl-C too, and never throws: it says what it could not do. */
  quiet(method: string, path: string, body?: unknown): Promise<SearchResponse | undefined> {
    return this.#client.send(method, path, body, { repeatable: true }).catch(() => undefined);
  }

  /** Lifts the write block on `index`; whether it is lifted (or the index gone). */
  async unblockQuietly(index: string): Promise<boolean> {
    const lifted = await this.quiet("PUT", `/${encodeURIComponent(index)}/_settings`, UNBLOCK);
    return lifted !== undefined && (lifted.status < 300 || lifted.status === 404);
  }

  // Sends one request; `ok` lists the statuses that count as done besides 2xx.
  #sender(signal: AbortSignal | undefined, noted: boolean): Send {
    return async (method, path, body, options = {}) => {
      if (noted) this.#last = `${method} ${path.split("?", 1)[0]}`;
      const response = await this.#client.send(method, path, body, {
        repeatable: options.repeatable ?? true,
        ...definedFields({ signal }),
      });
      if (
        (response.status < 200 || response.status >= 300) &&
        !(options.ok ?? []).includes(response.status)
      ) {
        throw new StepError(errorDetail(response.body), response.status);
      }
      return response;
    };
  }
}
