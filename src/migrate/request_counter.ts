/** Where a target counts each request or query it sends to its connection. */
export interface RequestCounter {
  /** `n` more requests or queries (one by default), reads included, sent to `connection`. */
  count(connection: string, n?: number): void;
}

/**
 * The requests of one run, by connection: the driver's context hands it to the targets, and the
 * engine reads each connection's total from it for the report.
 */
export class RequestTally implements RequestCounter {
  readonly #counts = new Map<string, number>();

  count(connection: string, n = 1): void {
    this.#counts.set(connection, this.of(connection) + n);
  }

  /** The requests sent to `connection` so far; 0 before the first. */
  of(connection: string): number {
    return this.#counts.get(connection) ?? 0;
  }
}
