// The process and its runtime as OpenTelemetry's semantic conventions name them: CPU time,
// resident memory and uptime; V8's heap spaces, the event loop's delay and garbage collection where
// the runtime gives them (see runtime_sources.ts). Observable instruments, read when the registry is
// collected (a scrape): nothing here runs per request.
//
// Shared by the apps of a process, as the registry is: the first that observes starts the monitors
// (the loop's delay, the GC observer), the last that stops ends them, so that a closed app leaves
// no monitor running.
import type { BatchObservableCallback, Histogram, Meter, Observable } from "@opentelemetry/api";
import type { LoopDelayMonitor, RuntimeSources } from "./runtime_sources.ts";
import { definedFields } from "../defined_fields.ts";

/** The process's series, reported while at least one app observes them. */
export interface RuntimeMetrics {
  /** Reports them until the returned function is called (once is enough; again does nothing). */
  observe(): () => void;
  /** How many observe them now: none once every app that did has closed. */
  readonly observers: number;
}

/** OpenTelemetry's buckets for `v8js.gc.duration`, in seconds. */
export const GC_DURATION_BUCKETS: readonly number[] = [0.01, 0.1, 1, 10];

interface Instruments {
  readonly observables: Observable[];
  readonly read: (monitor: LoopDelayMonitor | undefined) => BatchObservableCallback;
  readonly gc?: Histogram;
}

const DELAYS = ["min", "max", "mean", "stddev", "p50", "p90", "p99"] as const;

// The conventions' own descriptions, word for word.
const DELAY_WORDS: Readonly<Record<(typeof DELAYS)[number], string>> = {
  min: "minimum",
  max: "maximum",
  mean: "mean",
  stddev: "standard deviation",
  p50: "50 percentile",
  p90: "90 percentile",
  p99: "99 percentile",
};

// A reading that throws (a runtime's stub) leaves out its own series, not the others'.
function attempt(read: () => void): void {
  try {
    read();
  } catch {
    // Nothing to report: the series is absent from this scrape.
  }
}

function instruments(meter: Meter, sources: RuntimeSources): Instruments {
  const observables: Observable[] = [];
  const made = <T extends Observable>(instrument: T): T => {
    observables.push(instrument);
    return instrument;
  };
  const cpu = sources.cpu &&
    made(meter.createObservableCounter("process.cpu.time", {
      unit: "s",
      description: "Total CPU seconds broken down by different CPU modes.",
    }));
  const memory = sources.rss &&
    made(meter.createObservableUpDownCounter("process.memory.usage", {
      unit: "By",
      description: "The amount of physical memory in use.",
    }));
  const uptime = sources.uptime &&
    made(meter.createObservableGauge("process.uptime", {
      unit: "s",
      description: "The time the process has been running.",
    }));
  const heap = sources.heapSpaces && {
    used: made(meter.createObservableUpDownCounter("v8js.memory.heap.used", {
      unit: "By",
      description: "Heap Memory size allocated.",
    })),
    limit: made(meter.createObservableUpDownCounter("v8js.memory.heap.limit", {
      unit: "By",
      description: "Total heap memory size pre-allocated.",
    })),
    available: made(meter.createObservableUpDownCounter("v8js.heap.space.available_size", {
      unit: "By",
      description: "Heap space available size.",
    })),
    physical: made(meter.createObservableUpDownCounter("v8js.heap.space.physical_size", {
      unit: "By",
      description: "Committed size of a heap space.",
    })),
  };
  const delay = sources.loopDelay &&
    Object.fromEntries(DELAYS.map((figure) => [
      figure,
      made(meter.createObservableGauge(`nodejs.eventloop.delay.${figure}`, {
        unit: "s",
        description: `Event loop ${DELAY_WORDS[figure]} delay.`,
      })),
    ])) as Record<(typeof DELAYS)[number], Observable>;
  const gc = sources.gc &&
    meter.createHistogram("v8js.gc.duration", {
      unit: "s",
      description: "Garbage collection duration.",
      advice: { explicitBucketBoundaries: [...GC_DURATION_BUCKETS] },
    });
  return {
    observables,
    read: (monitor) => (result) => {
      const observe = (instrument: Observable, value: number | undefined) => {
        if (value !== undefined) result.observe(instrument, value);
      };
      if (cpu !== undefined) {
        attempt(() => {
          const time = sources.cpu!();
          if (time === undefined) return;
          result.observe(cpu, time.user, { "cpu.mode": "user" });
          result.observe(cpu, time.system, { "cpu.mode": "system" });
        });
      }
      if (memory !== undefined) attempt(() => observe(memory, sources.rss!()));
      if (uptime !== undefined) attempt(() => observe(uptime, sources.uptime!()));
      if (heap !== undefined) {
        attempt(() => {
          for (const space of sources.heapSpaces!()) {
            const at = { "v8js.heap.space.name": space.name };
            result.observe(heap.used, space.used, at);
            result.observe(heap.limit, space.size, at);
            result.observe(heap.available, space.available, at);
            result.observe(heap.physical, space.physical, at);
          }
        });
      }
      if (delay !== undefined && monitor !== undefined) {
        attempt(() => {
          const taken = monitor.take();
          if (taken === undefined) return;
          for (const figure of DELAYS) result.observe(delay[figure], taken[figure]);
        });
      }
    },
    ...definedFields({ gc }),
  };
}

/**
 * The process's series on `meter`, from `sources`: made with the first `observe`, on the meter
 * given then.
 */
export function runtimeMetrics(meter: Meter, sources: RuntimeSources): RuntimeMetrics {
  let made: Instruments | undefined;
  let observers = 0;
  let stop: (() => void) | undefined;
  const start = (): () => void => {
    made ??= instruments(meter, sources);
    const { observables, gc } = made;
    const monitor = sources.loopDelay?.();
    const read = made.read(monitor);
    if (observables.length > 0) meter.addBatchObservableCallback(read, observables);
    const unobserveGc = gc === undefined
      ? undefined
      : sources.gc?.((type, seconds) => gc.record(seconds, { "v8js.gc.type": type }));
    return () => {
      if (observables.length > 0) meter.removeBatchObservableCallback(read, observables);
      monitor?.stop();
      unobserveGc?.();
    };
  };
  return {
    observe() {
      if (observers++ === 0) stop = start();
      let observing = true;
      return () => {
        if (!observing) return;
        observing = false;
        if (--observers === 0) {
          stop?.();
          stop = undefined;
        }
      };
    },
    get observers() {
      return observers;
    },
  };
}
