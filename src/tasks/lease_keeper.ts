// The lease of a lock a singleton daemon holds: renewed on a beat of a third of the lease from
// each renewal's start, a failed renewal tried again sooner, and a watchdog that says the lease
// may be lost a third of the lease before it surely ends, unless a renewal confirmed it again.
// Counted from the start of the call that confirmed it: the store's own count began later.
import { messageOf } from "../context/message_of.ts";
import type { Clock, Timer } from "../runtime/clock.ts";

// How soon a renewal that failed is tried again (sooner where a third of the lease is shorter).
const RETRY_MS = 500;

/** What a lease keeper renews: a held lock's `renew`. */
export type Renew = (leaseMs: number) => Promise<boolean>;

/** Keeps one lease going until it is stopped or lost. */
export class LeaseKeeper {
  readonly #renew: Renew;
  readonly #leaseMs: number;
  readonly #every: number;
  readonly #clock: Clock;
  readonly #lost: (why: string) => void;
  #stopped = false;
  #renewal: Timer | undefined;
  #watchdog: Timer | undefined;
  #lastError: unknown;
  /** Whether a renewal confirmed the lease. */
  confirmed = false;
  /** The renewal under way, if any: a release waits for it, since it could land after. */
  renewing: Promise<boolean> | undefined;

  /** `lost(why)` is told once, when the lease may be lost; nothing is renewed after. */
  constructor(renew: Renew, leaseMs: number, clock: Clock, lost: (why: string) => void) {
    this.#renew = renew;
    this.#leaseMs = leaseMs;
    this.#every = Math.max(1, Math.floor(leaseMs / 3));
    this.#clock = clock;
    this.#lost = lost;
  }

  /**
   * Counts the lease from `takenAt` (the start of the try that took the lock) until a renewal
   * confirms it, and renews it at once: resolves once that renewal answered.
   */
  start(takenAt: number): Promise<void> {
    this.#watch(takenAt, () => "its lease could not be confirmed in time");
    return this.#renewNow();
  }

  /** Why the first renewal did not confirm the lease, when it failed. */
  get failure(): string {
    return messageOf(this.#lastError);
  }

  /** Renews no more. */
  stop(): void {
    this.#stopped = true;
    this.#renewal?.cancel();
    this.#watchdog?.cancel();
  }

  #lose(why: string): void {
    if (this.#stopped) return;
    this.stop();
    this.#lost(why);
  }

  #watch(from: number, why: () => string): void {
    this.#watchdog?.cancel();
    const at = from + this.#leaseMs - this.#every;
    this.#watchdog = this.#clock.after(
      Math.max(1, at - this.#clock.monotonic()),
      () => this.#lose(why()),
    );
  }

  async #renewNow(): Promise<void> {
    const clock = this.#clock;
    const started = clock.monotonic();
    let held: boolean;
    try {
      this.renewing = this.#renew(this.#leaseMs);
      held = await this.renewing;
    } catch (error) {
      this.#lastError = error;
      // Tried again soon: the lease holds until the watchdog says otherwise.
      if (!this.#stopped) {
        this.#renewal = clock.after(Math.min(RETRY_MS, this.#every), () => this.#renewNow());
      }
      return;
    } finally {
      this.renewing = undefined;
    }
    if (this.#stopped) return;
    if (!held) return this.#lose("the lock manager says another replica may hold it now");
    this.confirmed = true;
    this.#lastError = undefined;
    this.#watch(started, () => {
      const error = this.#lastError;
      return `no renewal was confirmed in time${
        error === undefined ? "" : ` (${messageOf(error)})`
      }`;
    });
    // On a beat from each renewal's start: a slow one does not push the next one late.
    this.#renewal = clock.after(
      Math.max(1, started + this.#every - clock.monotonic()),
      () => this.#renewNow(),
    );
  }
}
