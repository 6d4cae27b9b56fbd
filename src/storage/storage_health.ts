// The `storage` health component: UP while every store answers (a `head` of its bucket, its
// folder's check on the disk), with each store's kind and state; DOWN naming those that did not.
import { type HealthCheck, HealthIndicator } from "../actuator/health_indicator.ts";
import type { Class } from "../context/class.ts";
import type { ObjectStorage } from "./object_storage.ts";

/** A store as the health details show it. */
export interface StoreHealth {
  readonly kind: ObjectStorage["kind"];
  readonly status: "UP" | "DOWN";
  /** What went wrong, when it is down. */
  readonly error?: string;
}

/** The indicator class of an app's stores, which `storage()` registers. */
export function storageHealth(stores: () => readonly ObjectStorage[]): Class {
  @HealthIndicator("storage")
  class StorageHealthIndicator implements HealthCheck {
    async check(): Promise<Record<string, unknown>> {
      const checked = await Promise.all(
        stores().map(async (store) => {
          try {
            await store.check();
            return [store.name, { kind: store.kind, status: "UP" }] as const;
          } catch (error) {
            const shown = error instanceof Error ? error.message : String(error);
            return [store.name, { kind: store.kind, status: "DOWN", error: shown }] as const;
          }
        }),
      );
      const down = checked.filter(([, health]) => health.status === "DOWN");
      if (down.length > 0) {
        throw new Error(down.map(([, health]) => (health as StoreHealth).error).join("; "));
      }
      return { stores: Object.fromEntries(checked) };
    }
  }
  return StorageHealthIndicator;
}
