// `storage()`: an `ObjectStorage` bean for each `storage:` entry (the disk's `./data/storage` when
// there is none), by its name, the primary one also by class; and the `storage` health component.
// A store's driver is loaded only when a store of its kind is configured.
import { optionalApi } from "../actuator/opentelemetry.ts";
import type { FeatureFactory } from "../app_feature.ts";
import { overrideEnv } from "../config/env.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { SetupHost } from "../feature_value.ts";
import { ObjectStorage } from "./object_storage.ts";
import type { StorageDriver } from "./storage_driver.ts";
import { type StorageFeature, storageFeature } from "./storage_feature.ts";
import { storageHealth } from "./storage_health.ts";
import { type StoreSettings, storeSettings } from "./storage_settings.ts";
import type { R2Bindings } from "./r2_driver.ts";

/**
 * Object storage, for `bootstrap({ storage: storage() })`: an {@linkcode ObjectStorage} bean for
 * each entry of `storage:` (`file:<folder>`, `s3://<bucket>`, `r2:<BINDING>`), injected by its
 * name, the primary one (or the only one) also by class. With no `storage:` at all, one store on
 * the disk, `./data/storage`, named `storage`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { ObjectStorage, storage } from "@thaw/thaw/storage";
 *
 * const folder = await Deno.makeTempDir();
 * const app = await bootstrap({
 *   config: { storage: [{ name: "uploads", url: `file:${folder}` }] },
 *   storage: storage(),
 * });
 * const uploads = app.getBean(ObjectStorage);
 * assert.equal(uploads, app.getBean("uploads"));
 * await uploads.put("a.txt", "a");
 * assert.equal((await uploads.head("a.txt"))?.size, 1);
 * await app.close();
 * await Deno.remove(folder, { recursive: true });
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/storage.md
 */
export function storage(): StorageFeature {
  return storageFeature(setUp);
}

async function setUp(
  settings: ThawSettings,
  { config, context }: SetupHost,
): Promise<FeatureFactory> {
  const stores = storeSettings(config, overrideEnv());
  const api = await optionalApi();
  const made: ObjectStorage[] = [];
  const bindings = stores.some((store) => store.kind === "r2")
    ? new (await import("./r2_driver.ts")).R2Bindings()
    : undefined;
  for (const [i, store] of stores.entries()) {
    const driver = await driverOf(store, bindings);
    const telemetry = api === undefined
      ? undefined
      : new (await import("./storage_telemetry.ts")).StorageTelemetry(api, store.name, store.kind);
    context.registerBean({
      name: store.name,
      type: ObjectStorage,
      source: settings.config.values.storage === undefined
        ? "storage() (the default store, file:./data/storage)"
        : settings.where(`storage[${i}]`),
      primary: store.primary,
      create: () => {
        const made1 = new ObjectStorage(store.name, driver, telemetry);
        made.push(made1);
        return Promise.resolve(made1);
      },
    });
  }
  // Served by the actuator's health, where the app has it; a record nobody reads otherwise.
  context.register(storageHealth(() => made));
  return () => ({
    // A Worker's R2 bindings come with each event: kept before the event is handled.
    ...(bindings === undefined ? {} : { handlers: bindings.handlers }),
    close: {
      listeners: () => {
        for (const store of made) store.close();
        return Promise.resolve(undefined);
      },
    },
  });
}

async function driverOf(
  store: StoreSettings,
  bindings: R2Bindings | undefined,
): Promise<StorageDriver> {
  switch (store.kind) {
    case "file":
      return new (await import("./file_driver.ts")).FileDriver(store.folder);
    case "s3":
      return new (await import("./s3_driver.ts")).S3Driver(store);
    case "r2":
      return new (await import("./r2_driver.ts")).R2Driver(store.binding, bindings as R2Bindings);
  }
}
