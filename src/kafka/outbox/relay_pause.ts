// How the relay waits between its passes: a commit that wrote rows ends the wait (or the next one,
// when none is under way), and the close ends any.

/** The relay's waits, its wake-ups and its close. */
export class RelayPause {
  #closing = false;
  // A commit wrote rows since the pass under way started: the next wakeable wait ends at once.
  #woken = false;
  // Ends the wait under way, if any (as its kind allows).
  #wake: (() => void) | undefined;

  /** Whether the relay is told to stop: no pass starts, no wait lasts. */
  get closing(): boolean {
    return this.#closing;
  }

  /** The relay runs (again): waits last. */
  open(): void {
    this.#closing = false;
  }

  /** The relay stops: the wait under way ends, and none after lasts. */
  close(): void {
    this.#closing = true;
    this.#wake?.();
  }

  /** A commit wrote rows: a wakeable wait ends now, or the next one at once. */
  poke(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** A pass starts: it reads what the commits before it wrote. */
  passStarts(): void {
    this.#woken = false;
  }

  /** Waits `ms`, or less once closing (or, if `wakeable`, once a commit wrote rows). */
  sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.#closing || (wakeable && this.#woken)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = () => {
        if (this.#closing || wakeable) done();
      };
    });
  }
}
