// What the scheduler's tests share: a scheduler on a virtual clock, a host that records what it
// logs, a job, and a lock manager in memory.
import { createScheduler, type SchedulerDevices } from "../../src/scheduling/scheduler.ts";
import type { ScheduledMethod, SchedulerHost } from "../../src/scheduling/scheduled_jobs.ts";
import { type HeldLock, LockManager, type LockRequest } from "../../src/tasks/lock_manager.ts";
import { loadCron } from "../../src/scheduling/trigger.ts";
import { FakeClock } from "../fake_clock.ts";

export const Cron = await loadCron();

export const T0 = Date.parse("2026-03-01T00:00:00Z");

export interface Logged {
  readonly level: "error" | "warn";
  readonly message: string;
  readonly error?: unknown;
}

export function testHost(
  options: {
    enabled?: boolean;
    config?: Record<string, unknown>;
    locks?: LockManager;
    /** Beans by name, for a lock that names its manager. */
    named?: Record<string, unknown>;
  } = {},
): SchedulerHost & { logged: Logged[] } {
  const logged: Logged[] = [];
  return {
    logged,
    enabled: options.enabled ?? true,
    configValue: (key) => options.config?.[key],
    logger: {
      error: (message, error) => logged.push({ level: "error", message, error }),
      warn: (message) => logged.push({ level: "warn", message }),
    },
    beanOf: (type) => {
      const bean = typeof type === "string" ? options.named?.[type] : options.locks;
      if (bean === undefined) throw new Error("no bean");
      return bean;
    },
    hasBean: (type) =>
      typeof type === "string"
        ? Object.hasOwn(options.named ?? {}, type)
        : options.locks instanceof type,
  };
}

export function job(
  schedule: unknown,
  run: () => unknown,
  extra: Partial<ScheduledMethod> = {},
): ScheduledMethod {
  return {
    name: "Jobs.run",
    bean: "class Jobs",
    beanName: "jobs",
    methodName: "run",
    arity: 0,
    schedule,
    lock: undefined,
    run,
    ...extra,
  };
}

/** A scheduler of `methods` on a virtual clock, never on Deno.cron. */
export function scheduled(
  methods: ScheduledMethod[],
  host: SchedulerHost = testHost(),
  devices: SchedulerDevices = {},
) {
  const clock = (devices.clock as FakeClock | undefined) ?? new FakeClock(T0);
  const scheduler = createScheduler(Cron, methods, host, { denoCron: null, ...devices, clock });
  return { clock, scheduler };
}

/** Records the virtual time of each run. */
export function recorder(clock: () => FakeClock) {
  const times: number[] = [];
  return { times, run: () => void times.push(clock().now() - T0) };
}

export class MemoryLocks extends LockManager {
  readonly taken: LockRequest[] = [];
  readonly released: string[] = [];
  holder: "free" | "other" | "broken" = "free";
  failUnlock = false;

  acquire(request: LockRequest): Promise<HeldLock | undefined> {
    if (this.holder === "broken") return Promise.reject(new Error("database down"));
    if (this.holder === "other") return Promise.resolve(undefined);
    this.taken.push(request);
    return Promise.resolve({
      release: () => {
        if (this.failUnlock) return Promise.reject(new Error("gone"));
        this.released.push(request.key);
        return Promise.resolve();
      },
    });
  }
}
