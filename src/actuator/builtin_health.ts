// The components Thaw checks without an indicator of the app's, under Spring Boot's names: the
// disk's (`diskSpace`), and those its own beans offer (`redis`, the lock provider's `db`, the
// search clients' `search`), each
// turned off by its `management.health.<name>.enabled` key.
import type { BeanEntry } from "../context/application_context.ts";
import type { ThawSettings } from "../config/thaw_settings.ts";
import type { ComponentHealth } from "./health.ts";
import { HEALTH_CONTRIBUTION, type HealthContributor } from "./health_contribution.ts";
import type { IndicatorBean } from "./health_hooks.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";

// The key that turns off each component a bean may offer.
const ENABLED = {
  redis: "management.health.redis.enabled",
  db: "management.health.db.enabled",
  search: "management.health.search.enabled",
} as const;

/**
 * A check that a probe finds still running is answered by that run, not started again: a
 * database that hangs holds one query of the check, not one per probe.
 */
function shared<T>(check: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => running ??= check().finally(() => (running = undefined));
}

// workerd with `nodejs_compat` has a `node:fs` over memory, whose free space says nothing.
function hasFileSystem(): boolean {
  const g = globalThis as { process?: { getBuiltinModule?: unknown } };
  return typeof g.process?.getBuiltinModule === "function" && !onWorkerd();
}

// Asked, not tried: trying would prompt on a terminal, or hang the start on a disk that hangs.
function statfsDenied(): boolean {
  const deno = (globalThis as {
    Deno?: { permissions?: { querySync?(d: { name: "sys"; kind: "statfs" }): { state: string } } };
  }).Deno;
  const state = deno?.permissions?.querySync?.({ name: "sys", kind: "statfs" }).state;
  return state !== undefined && state !== "granted";
}

/** The `diskSpace` component, or why it is left out where the app cannot read the disk. */
export type DiskSpace = { readonly indicator: IndicatorBean } | { readonly leftOut: string };

/**
 * The `diskSpace` component, where the runtime has a file system and
 * `management.health.diskspace.enabled` leaves it on: its module is loaded then only. Where Deno
 * does not allow reading a disk's free space (no `--allow-sys=statfs`), it is left out, saying
 * why: an app that never granted it would otherwise be DOWN for good.
 */
export async function diskSpaceHealth(settings: ThawSettings): Promise<DiskSpace | undefined> {
  if (!settings.get("management.health.diskspace.enabled") || !hasFileSystem()) return undefined;
  if (statfsDenied()) {
    return {
      leftOut: "[thaw] the diskSpace health component is left out: Deno does not allow this " +
        "app to read the free space of a disk; grant it with --allow-sys=statfs, or say so " +
        "with management.health.diskspace.enabled: false",
    };
  }
  const { diskSpaceIndicator } = await import("./disk_space_health.ts");
  const indicator = diskSpaceIndicator(
    settings.get("management.health.diskspace.path") ?? ".",
    settings.get("management.health.diskspace.threshold"),
  );
  return { indicator: { ...indicator, check: shared(indicator.check) } };
}

/**
 * The components the app's beans offer (a `RedisCacheManager`'s `redis`, a `SqlLockProvider`'s
 * `db`), but those their key turns off. Each shares its component with the app's indicators of
 * its name, if any.
 */
export function contributedHealth(
  beans: readonly BeanEntry[],
  settings: ThawSettings,
): IndicatorBean[] {
  const indicators: IndicatorBean[] = [];
  // A bean that two names hold (a `@Bean` method returning another bean) offers one component.
  const seen = new Set<unknown>();
  for (const { name, type, instance } of beans) {
    if (typeof instance !== "object" || instance === null || seen.has(instance)) continue;
    const offer = (instance as Partial<HealthContributor>)[HEALTH_CONTRIBUTION];
    if (typeof offer !== "function") continue;
    seen.add(instance);
    const contribution = offer.call(instance);
    const key = (ENABLED as Record<string, (typeof ENABLED)[keyof typeof ENABLED] | undefined>)[
      contribution.name
    ];
    if (key !== undefined && !settings.get(key)) continue;
    indicators.push({
      name: contribution.name,
      className: type?.name ?? name,
      check: shared(async (): Promise<ComponentHealth> => ({
        status: "UP",
        details: await contribution.check(),
      })),
      builtIn: contribution.keyed ? { part: name } : {},
    });
  }
  return indicators;
}
