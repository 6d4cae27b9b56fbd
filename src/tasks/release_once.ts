// The lock a lock manager hands out: gives it back once, however often `release` is called (a
// caller's retry, a `finally` and an error path both releasing), and gives every call the one
// outcome of that release.
import type { HeldLock } from "./lock_manager.ts";

/** A held lock whose `give` runs at the first `release()` only. */
export class ReleaseOnce implements HeldLock {
  readonly #give: () => Promise<void>;
  #released: Promise<void> | undefined;

  constructor(give: () => Promise<void>) {
    this.#give = give;
  }

  release(): Promise<void> {
    return this.#released ??= this.#give();
  }
}
