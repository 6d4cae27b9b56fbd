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

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.#released !== undefined;
  }

  release(): Promise<void> {
    return this.#released ??= this.#give();
  }
}

/**
 * A held lock with a lease its holder renews and a fencing token: once given back, a renewal
 * answers `false` without asking the store.
 */
export class LeasedLock extends ReleaseOnce {
  /** The lock's fencing token. */
  readonly token: number | undefined;
  readonly #renew: (leaseMs: number) => Promise<boolean>;

  constructor(
    give: () => Promise<void>,
    token: number | undefined,
    renew: (leaseMs: number) => Promise<boolean>,
  ) {
    super(give);
    this.token = token;
    this.#renew = renew;
  }

  renew(leaseMs: number): Promise<boolean> {
    return this.released ? Promise.resolve(false) : this.#renew(leaseMs);
  }
}
