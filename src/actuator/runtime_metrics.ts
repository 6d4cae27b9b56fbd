// The process and its runtime as OpenTelemetry's semantic conventions name them: CPU time,
// resident memory and uptime; V8's heap spaces, the event loop's delay and garbage collection where
// the runtime gives them (see runtime_sources.ts). Observable instruments, read when the registry is
// collected (a scrape): nothing here runs per request.
//
// Shared by the apps of a process, as the registry is: the first that observes starts the monitors
// (the loop's delay, the GC observer), the last that stops ends them, so that a closed app leaves
// no monitor running.
import type {
  BatchObservableCallback,
  BatchObservableResult,
  Histogram,
  Meter,
  Observable,
} from "@opentelemetry/api";
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

// Reads one family of series into a scrape's result.
type Reading = (result: BatchObservableResult, monitor: LoopDelayMonitor | undefined) => void;

// Makes an observable instrument, listed for the batch callback.
type Make = <T extends Observable>(instrument: T) => T;

function instruments(meter: Meter, sources: RuntimeSources): Instruments {
  const observables: Observable[] = [];
  const made: Make = (instrument) => {
    observables.push(instrument);
    return instrument;
  };
  const readings = [
    cpuReading(meter, made, sources.cpu),
    gaugeReading(
      sources.rss,
      () =>
        made(meter.createObservableUpDownCounter("process.memory.usage", {
          unit: "By",
          description: "The amount of physical memory in use.",
        })),
    ),
    gaugeReading(
      sources.uptime,
      () =>
        made(meter.createObservableGauge("process.uptime", {
          unit: "s",
          description: "The time the process has been running.",
        })),
    ),
    heapReading(meter, made, sources.heapSpaces),
    delayReading(meter, made, sources.loopDelay !== undefined),
  ].filter((reading) => reading !== undefined);
  const gc = sources.gc &&
    meter.createHistogram("v8js.gc.duration", {
      unit: "s",
      description: "Garbage collection duration.",
      advice: { explicitBucketBoundaries: [...GC_DURATION_BUCKETS] },
    });
  return {
    observables,
    read: (monitor) => (result) => {
      for (const reading of readings) attempt(() => reading(result, monitor));
    },
    ...definedFields({ gc }),
  };
}

function cpuReading(
  meter: Meter,
  made: Make,
  read: RuntimeSources["cpu"],
): Reading | undefined {
  if (read === undefined) return undefined;
  const cpu = made(meter.createObservableCounter("process.cpu.time", {
    unit: "s",
    description: "Total CPU seconds broken down by different CPU modes.",
  }));
  return (result) => {
    const time = read();
    if (time === undefined) return;
    result.observe(cpu, time.user, { "cpu.mode": "user" });
    result.observe(cpu, time.system, { "cpu.mode": "system" });
  };
}

// One value a source may not have this time.
function gaugeReading(
  read: (() => number | undefined) | undefined,
  make: () => Observable,
): Reading | undefined {
  if (read === undefined) return undefined;
  const instrument = make();
  return (result) => {
    const value = read();
    if (value !== undefined) result.observe(instrument, value);
  };
}

function heapReading(
  meter: Meter,
  made: Make,
  read: RuntimeSources["heapSpaces"],
): Reading | undefined {
  if (read === undefined) return undefined;
  const counter = (name: string, description: string) =>
    made(meter.createObservableUpDownCounter(name, { unit: "By", description }));
  const used = counter("v8js.memory.heap.used", "Heap Memory size allocated.");
  const limit = counter("v8js.memory.heap.limit", "Total heap memory size pre-allocated.");
  const available = counter("v8js.heap.space.available_size", "Heap space available size.");
  const physical = counter("v8js.heap.space.physical_size", "Committed size of a heap space.");
  return (result) => {
    for (const space of read()) {
      const at = { "v8js.heap.space.name": space.name };
      result.observe(used, space.used, at);
      result.observe(limit, space.size, at);
      result.observe(available, space.available, at);
      result.observe(physical, space.physical, at);
    }
  };
}

function delayReading(meter: Meter, made: Make, monitored: boolean): Reading | undefined {
  if (!monitored) return undefined;
  const delay = Object.fromEntries(DELAYS.map((figure) => [
    figure,
    made(meter.createObservableGauge(`nodejs.eventloop.delay.${figure}`, {
      unit: "s",
      description: `Event loop ${DELAY_WORDS[figure]} delay.`,
    })),
  ])) as Record<(typeof DELAYS)[number], Observable>;
  return (result, monitor) => {
    const taken = monitor?.take();
    if (taken === undefined) return;
    for (const figure of DELAYS) result.observe(delay[figure], taken[figure]);
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
