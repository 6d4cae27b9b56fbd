import type { SearchResponse } from "../http/search_client.ts";

/**
 * Sends one request of a reindex step; `ok` lists the statuses that count as done besides 2xx,
 * and any other answer throws a {@linkcode StepError}.
 */
export type Send = (
  method: string,
  path: string,
  body?: unknown,
  options?: { ok?: readonly number[]; repeatable?: boolean },
) => Promise<SearchResponse>;

/** A step's request was answered with an error, or with what the step cannot use. */
export class StepError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = "StepError";
    if (status !== undefined) this.status = status;
  }
}

/** A step that failed, with the request its failure names: the last one the step sent. */
export interface FailedStep {
  readonly step: string;
  readonly error: unknown;
  /** `METHOD /path`; empty when the step sent none. */
  readonly request: string;
}
