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
  // JoinGroups asked for and not ended: the member waits on the group, up to its rebalance
  // timeout, and no heartbeat goes meanwhile.
  #joins = 0;

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

  /** A JoinGroup was asked for (the member's, or the client's own rejoin). */
  joinStarted(): void {
    this.#joins++;
  }

  /**
   * A JoinGroup ended, answered or not; `ours` when it was the member's current consumer's. The
   * session timeout counts from then: a client that tries again (after a retryable error) has
   * that long to, and one that gave up is renewed once it passed.
   */
  joinEnded(ours: boolean): void {
    this.#joins--;
    if (ours) this.beat();
  }

  /**
   * Looks every `intervalMs`: once no answer came for a session timeout, with no join under way
   * and unless `busy` (a rebalance of the member's own under way), runs `renew`, one at a time.
   * A member left with no generation and no join (the client's rejoin failed, and it tries no
   * more) is renewed too: nothing else would ever join it again.
   */
  start(intervalMs: number, busy: () => boolean, renew: () => Promise<void>): void {
    this.#timer ??= setInterval(() => {
      if (
        this.#renewal !== undefined || this.#joins > 0 || busy() ||
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
