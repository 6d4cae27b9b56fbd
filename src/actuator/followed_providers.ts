// Instruments on the meter providers Thaw's meters go to now: remade when the providers change
// (an app that registers its own after `bootstrap`), those on the providers left dropped.
import type { MeterProvider } from "@opentelemetry/api";

/** What is made on each provider, remade as they change. */
export class FollowedProviders<T> {
  readonly #providers: () => readonly MeterProvider[];
  readonly #make: (provider: MeterProvider) => T;
  readonly #drop: (made: T) => void;
  #on: readonly MeterProvider[] = [];
  #made: readonly T[] = [];
  #stopped = false;

  /**
   * @param providers the providers now
   * @param make what to make on one
   * @param drop undoes what `make` made (an observable's callback removed)
   */
  constructor(
    providers: () => readonly MeterProvider[],
    make: (provider: MeterProvider) => T,
    drop: (made: T) => void = () => {},
  ) {
    this.#providers = providers;
    this.#make = make;
    this.#drop = drop;
  }

  /** What is made on each provider now; none once stopped. */
  now(): readonly T[] {
    if (this.#stopped) return [];
    const providers = this.#providers();
    if (
      providers.length !== this.#on.length || providers.some((p, i) => p !== this.#on[i])
    ) {
      this.#made.forEach(this.#drop);
      this.#on = [...providers];
      this.#made = this.#on.map(this.#make);
    }
    return this.#made;
  }

  /** Drops what was made; nothing is made from now on. */
  stop(): void {
    this.#stopped = true;
    this.#made.forEach(this.#drop);
    this.#made = [];
    this.#on = [];
  }
}
