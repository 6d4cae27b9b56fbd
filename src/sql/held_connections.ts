// The count of a pool's connections held by callers, for a close that waits for them: a pool
// closed under a statement in flight would fail it (mysql2 ends every connection it has).

/** How many connections callers hold, and a promise of the moment none is. */
export class HeldConnections {
  #count = 0;
  #waiters: (() => void)[] = [];

  /** A caller took a connection. */
  take(): void {
    this.#count++;
  }

  /** A caller gave one back. */
  give(): void {
    this.#count--;
    if (this.#count === 0) { for (const resolve of this.#waiters.splice(0)) resolve(); }
  }

  /** Resolves when no connection is held (at once when none is). */
  none(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}
