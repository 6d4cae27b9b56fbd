// What the runtime tells of its own process, each reading absent where the runtime cannot give it:
// found through `globalThis.process` and its `getBuiltinModule`, never through an import, so that an
// edge worker's bundle names no `node:` module and a worker without `process` (workerd) simply
// reports none of these.
//
// Checked on each runtime rather than assumed from its having the function: Deno's
// `monitorEventLoopDelay` answers figures that do not see the loop blocked (a 200 ms busy loop reads
// as a few µs), and Deno lists `gc` among the performance entry types but reports none; Bun's
// `node:v8` heap spaces are JavaScriptCore's figures under V8's space names. Those are left out.

/** The part of `globalThis` the readings come from; a stand-in in tests. */
export interface RuntimeGlobals {
  readonly process?: unknown;
  readonly Deno?: unknown;
}

/** One of V8's heap spaces, in bytes, as `v8.getHeapSpaceStatistics()` gives it. */
export interface HeapSpace {
  readonly name: string;
  readonly used: number;
  readonly size: number;
  readonly available: number;
  readonly physical: number;
}

/** The event loop's delay since the window began, in seconds. */
export interface LoopDelay {
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly stddev: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

/** A monitor of the event loop's delay, sampling from when it was made until `stop`. */
export interface LoopDelayMonitor {
  /** The window's figures, then a new window; `undefined` when it took no sample. */
  take(): LoopDelay | undefined;
  stop(): void;
}

/**
 * What the runtime can tell; each is absent where it cannot, and a reading is `undefined` where
 * the runtime answers a stand-in's zero (workerd has a `process` whose memory and uptime are 0
 * even without nodejs_compat: no process that runs has used no memory, no time, no CPU).
 */
export interface RuntimeSources {
  /** CPU time the process used, user and system, in seconds. */
  readonly cpu?: () => { readonly user: number; readonly system: number } | undefined;
  /** Resident set size, in bytes. */
  readonly rss?: () => number | undefined;
  /** Seconds since the process began. */
  readonly uptime?: () => number | undefined;
  /** V8's heap spaces (Node, Deno). */
  readonly heapSpaces?: () => readonly HeapSpace[];
  /** Starts a monitor of the loop's delay (Node, Bun); `undefined` where starting it fails. */
  readonly loopDelay?: () => LoopDelayMonitor | undefined;
  /** Reports each garbage collection's pause (Node) until the returned function is called. */
  readonly gc?: (pause: (type: string, seconds: number) => void) => () => void;
}

interface ProcessLike {
  cpuUsage?: () => { user: number; system: number };
  memoryUsage?: (() => { rss: number }) & { rss?: () => number };
  uptime?: () => number;
  versions?: { bun?: string };
  getBuiltinModule?: (id: string) => unknown;
}

interface Histogram {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  count?: number;
  percentile(p: number): number;
  enable(): void;
  disable(): void;
  reset(): void;
}

interface PerfHooks {
  monitorEventLoopDelay?: (options: { resolution: number }) => Histogram;
  PerformanceObserver?: {
    new (
      callback: (list: { getEntries(): { duration: number; detail?: unknown }[] }) => void,
    ): { observe(options: { entryTypes: string[] }): void; disconnect(): void };
    readonly supportedEntryTypes?: readonly string[];
  };
  constants?: Record<string, number>;
}

interface V8Module {
  getHeapSpaceStatistics?: () => {
    space_name: string;
    space_size: number;
    space_used_size: number;
    space_available_size: number;
    physical_space_size: number;
  }[];
}

/** How often the loop's delay is sampled, in milliseconds: Node's default, made explicit. */
export const LOOP_DELAY_RESOLUTION_MS = 10;

const real = (value: number): number | undefined => value > 0 ? value : undefined;

const fn = <T>(value: unknown): T | undefined =>
  typeof value === "function" ? value as T : undefined;

function builtin<T>(process: ProcessLike, id: string): Partial<T> {
  try {
    const found = process.getBuiltinModule?.(id);
    return typeof found === "object" && found !== null ? found as Partial<T> : {};
  } catch {
    return {};
  }
}

/** What `globals` (the runtime's own, unless a test gives others) can tell. */
export function runtimeSources(
  globals: RuntimeGlobals = globalThis as RuntimeGlobals,
): RuntimeSources {
  const process = globals.process as ProcessLike | undefined;
  if (typeof process !== "object" || process === null) return {};
  const deno = globals.Deno !== undefined;
  const bun = typeof process.versions?.bun === "string";
  const cpuUsage = fn<() => { user: number; system: number }>(process.cpuUsage);
  const memoryUsage = fn<() => { rss: number }>(process.memoryUsage);
  // `memoryUsage.rss()` alone: the whole `memoryUsage()` walks the heap too.
  const rss = fn<() => number>(process.memoryUsage?.rss);
  const uptime = fn<() => number>(process.uptime);
  const perf = builtin<PerfHooks>(process, "node:perf_hooks");
  const v8 = builtin<V8Module>(process, "node:v8");
  const spaces = bun ? undefined : fn<NonNullable<V8Module["getHeapSpaceStatistics"]>>(
    v8.getHeapSpaceStatistics,
  );
  const monitor = deno ? undefined : fn<NonNullable<PerfHooks["monitorEventLoopDelay"]>>(
    perf.monitorEventLoopDelay,
  );
  const Observer = perf.PerformanceObserver;
  const gcSeen = !deno && typeof Observer === "function" &&
    (Observer.supportedEntryTypes ?? []).includes("gc");
  return {
    ...(cpuUsage === undefined ? {} : {
      cpu: () => {
        // Microseconds.
        const { user, system } = cpuUsage.call(process);
        return real(user + system) === undefined
          ? undefined
          : { user: user / 1e6, system: system / 1e6 };
      },
    }),
    ...(rss !== undefined
      ? { rss: () => real(rss.call(process.memoryUsage)) }
      : memoryUsage !== undefined
      ? { rss: () => real(memoryUsage.call(process).rss) }
      : {}),
    ...(uptime === undefined ? {} : { uptime: () => real(uptime.call(process)) }),
    ...(spaces === undefined ? {} : {
      heapSpaces: () =>
        spaces.call(v8).map((s) => ({
          name: s.space_name,
          used: s.space_used_size,
          size: s.space_size,
          available: s.space_available_size,
          physical: s.physical_space_size,
        })),
    }),
    ...(monitor === undefined ? {} : { loopDelay: () => loopDelayMonitor(monitor.bind(perf)) }),
    ...(gcSeen ? { gc: (pause) => observeGc(Observer, perf.constants ?? {}, pause) } : {}),
  };
}

function loopDelayMonitor(
  monitor: NonNullable<PerfHooks["monitorEventLoopDelay"]>,
): LoopDelayMonitor | undefined {
  let histogram: Histogram;
  try {
    histogram = monitor({ resolution: LOOP_DELAY_RESOLUTION_MS });
    histogram.enable();
  } catch {
    return undefined;
  }
  // Nanoseconds, as Node and Bun give them.
  const seconds = (ns: number) => Number.isFinite(ns) ? ns / 1e9 : 0;
  return {
    take() {
      // With no sample, `min` is the largest integer and `mean` NaN: no figure at all.
      if (histogram.count === 0 || !Number.isFinite(histogram.mean)) return undefined;
      const delay = {
        min: seconds(histogram.min),
        max: seconds(histogram.max),
        mean: seconds(histogram.mean),
        stddev: seconds(histogram.stddev),
        p50: seconds(histogram.percentile(50)),
        p90: seconds(histogram.percentile(90)),
        p99: seconds(histogram.percentile(99)),
      };
      // Each scrape reads the loop since the one before, as OpenTelemetry's Node instrumentation
      // does: a delay long past would otherwise hold the maximum for the process's life.
      histogram.reset();
      return delay;
    },
    stop: () => histogram.disable(),
  };
}

function observeGc(
  Observer: NonNullable<PerfHooks["PerformanceObserver"]>,
  constants: Record<string, number>,
  pause: (type: string, seconds: number) => void,
): () => void {
  // OpenTelemetry's `v8js.gc.type` values, by Node's kinds.
  const types = new Map<number, string>([
    [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
    [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
    [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"],
  ]);
  const observer = new Observer((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry.detail as { kind?: number } | undefined)?.kind;
      const type = kind === undefined ? undefined : types.get(kind);
      // A kind Node adds later is left out rather than given a value the conventions lack.
      if (type !== undefined) pause(type, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}
