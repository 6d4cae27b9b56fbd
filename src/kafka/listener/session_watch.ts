// The client keeps the group's coordinator for good: when that broker dies, every heartbeat and
// commit goes to it and fails, while the group, on its new coordinator, drops the member. This
// watch sees that no heartbeat was answered for a session timeout and starts the member over.

/** When the group last showed life to a member, and the renewal once it stopped. */
export class SessionWatch {
  readonly #sessionTimeoutMs: number;
  // The last sign of life of the group: a heartbeat answered, a join.
  #lastBeat = Date.now();
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewal: Promise<void> | undefined;

  constructor(sessionTimeoutMs: number) {
    this.#sessionTimeoutMs = sessionTimeoutMs;
  }

  /** The renewal under way, if any. */
  get renewal(): Promise<void> | undefined {
    return this.#renewal;
  }

  /** The group answered (a heartbeat, a join). */
  beat(): void {
    this.#lastBeat = Date.now();
  }

  /**
   * Looks every `intervalMs`: once no answer came for a session timeout, unless `busy` (a
   * rebalance of the member's own under way, nothing held), runs `renew`, one at a time.
   */
  start(intervalMs: number, busy: () => boolean, renew: () => Promise<void>): void {
    this.#timer ??= setInterval(() => {
      if (
        this.#renewal !== undefined || busy() ||
        Date.now() - this.#lastBeat <= this.#sessionTimeoutMs
      ) return;
      this.#renewal = renew().finally(() => {
        this.#renewal = undefined;
      });
    }, intervalMs);
  }

  /** Looks no more. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
