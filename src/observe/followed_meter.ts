// Instruments on the meter provider registered now: made again when another is registered (an app
// may register its SDK after bootstrap), none while it is the no-op one, so that what reports
// through them costs a look-up and a comparison while nobody collects.
import type { Meter, MeterProvider } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import { VERSION } from "../version.ts";

/** Follows the registered meter provider, making a subsystem's instruments `T` on each. */
export class FollowedMeter<T> {
  readonly #api: OtelApi;
  readonly #make: (meter: Meter) => T;
  readonly #leave: ((made: T, meter: Meter) => void) | undefined;
  // What the no-op provider gives: a provider that gives it too is the no-op one.
  readonly #noop: Meter;
  #provider: MeterProvider | undefined;
  #meter: Meter | undefined;
  #made: T | undefined;

  /**
   * `make` makes the instruments on Thaw's meter of a provider; `leave` undoes what must be
   * undone when that provider is left (an observable's callback to remove).
   */
  constructor(
    api: OtelApi,
    make: (meter: Meter) => T,
    leave?: (made: T, meter: Meter) => void,
  ) {
    this.#api = api;
    this.#make = make;
    this.#leave = leave;
    this.#noop = api.createNoopMeter();
  }

  /** Leaves the provider followed now (its `leave` runs), and follows none until asked again. */
  leave(): void {
    if (this.#made !== undefined && this.#meter !== undefined) {
      this.#leave?.(this.#made, this.#meter);
    }
    this.#provider = undefined;
    this.#meter = undefined;
    this.#made = undefined;
  }

  /** The instruments of the meter provider registered now; none while it is the no-op one. */
  current(): T | undefined {
    const provider = this.#api.metrics.getMeterProvider();
    if (provider === this.#provider) return this.#made;
    this.leave();
    this.#provider = provider;
    const meter = provider.getMeter("thaw", VERSION);
    this.#meter = meter;
    if (meter !== this.#noop) this.#made = this.#make(meter);
    return this.#made;
  }
}
