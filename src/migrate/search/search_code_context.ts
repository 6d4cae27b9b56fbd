import { atCallSite } from "../code/call_site.ts";
import type { MigrationContext, SearchMigrationContext } from "../code/code_context.ts";
import type { OptionNames } from "../option_names.ts";
import { lateNotice } from "./apply_request.ts";
import { errorDetail, type SearchClient } from "./http/search_client.ts";

const METHODS = new Set(["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"]);

/** A request of a search code file was answered, but not with a 2xx. */
export class SearchRequestError extends Error {
  /** The answer's HTTP status. */
  readonly status: number;
  /** The cluster's answer. */
  readonly body: unknown;

  constructor(request: string, status: number, body: unknown) {
    super(`${request}: HTTP ${status}: ${errorDetail(body)}`);
    this.name = "SearchRequestError";
    this.status = status;
    this.body = body;
  }
}

/** Where a search code file's requests go, and what is said of them. */
export interface SearchCodeRun {
  readonly client: SearchClient;
  /** Aborts the request in flight when the lock is lost. */
  readonly lost: AbortSignal;
  readonly optionNames: OptionNames;
  /** Hears what the user should know of a request (a host that took it without answering). */
  readonly notice: (text: string) => void;
  /** Whether the code still runs: a request it did not await must not go out after its record. */
  readonly running: () => boolean;
}

/**
 * The context of a search code file: `base`, and requests through the connection's client, the
 * one JSON files use. Only `GET` and `HEAD` are ever sent to a second host after the first took
 * the request without answering: any other may have been applied there.
 */
export function searchContext(base: MigrationContext, run: SearchCodeRun): SearchMigrationContext {
  return {
    ...base,
    request: <T>(method: string, path: string, body?: unknown) =>
      atCallSite(async () => {
        if (typeof method !== "string" || !METHODS.has(method)) {
          throw new TypeError(
            `ctx.request takes a method of ${[...METHODS].join(", ")}, not ${String(method)}`,
          );
        }
        if (!run.running()) {
          throw new Error(
            "ctx.request was called after the migration returned: await every request",
          );
        }
        if (typeof path !== "string" || !path.startsWith("/")) {
          throw new TypeError(`ctx.request takes a path starting with /, not ${String(path)}`);
        }
        const response = await run.client.send(method, path, body, { signal: run.lost });
        const late = lateNotice(response, run.optionNames);
        if (late !== undefined) run.notice(late);
        if (response.status < 200 || response.status >= 300) {
          throw new SearchRequestError(`${method} ${path}`, response.status, response.body);
        }
        return response.body as T;
      }),
  };
}
