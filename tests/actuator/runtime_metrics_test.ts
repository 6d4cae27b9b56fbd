// The process's series (CPU time, memory, uptime; V8's heap, the event loop's delay and GC where the
// runtime gives them): read from this runtime, from a stand-in of a runtime, and from none (workerd
// has no `process`), and served at /actuator/prometheus with no code.
//
// What each runtime gives, asserted as such: V8's heap spaces on Node and Deno (Bun's engine is
// JavaScriptCore); the loop's delay on Node and Bun (Deno's monitor does not see the loop
// blocked); GC pauses on Node alone (Deno lists `gc` entries but reports none, Bun has none).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import * as sdk from "@opentelemetry/sdk-metrics";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus/build/src/PrometheusSerializer.js";
import type { DataPoint, Histogram } from "@opentelemetry/sdk-metrics";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { prometheusRegistry } from "../../src/actuator/prometheus_registry.ts";
import { runtimeMetrics } from "../../src/actuator/runtime_metrics.ts";
import {
  LOOP_DELAY_RESOLUTION_MS,
  type RuntimeGlobals,
  runtimeSources,
} from "../../src/actuator/runtime_sources.ts";
import { CollectingReader } from "../metric_reader.ts";
import { RUNTIME } from "../runtime.ts";

const HEAP = RUNTIME !== "bun";
const LOOP_DELAY = RUNTIME !== "deno";
const GC = RUNTIME === "node";

const DELAYS = ["min", "max", "mean", "stddev", "p50", "p90", "p99"];

function measured(globals?: RuntimeGlobals) {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  const metrics = runtimeMetrics(provider.getMeter("thaw"), runtimeSources(globals));
  return { reader, provider, metrics };
}

async function names(reader: CollectingReader): Promise<string[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) =>
    s.metrics.filter((m) => m.dataPoints.length > 0).map((m) => m.descriptor.name)
  ).sort();
}

const valueOf = (points: DataPoint<unknown>[], key: string, value: string) =>
  points.find((p) => p.attributes[key] === value)?.value as number | undefined;

// Work the CPU does, whatever the clock says: a fixed count of steps.
function work(): number {
  let x = 0;
  for (let i = 0; i < 20_000_000; i++) x = (x + i * 7) % 1_000_003;
  return x;
}

// Turns of the event loop until `check` finds what it waits for: the monitors report on the
// loop's turns and the GC's, not at a time. Bounded only against one that never comes.
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let turn = 0; turn < 2_000; turn++) {
    const found = await check();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, LOOP_DELAY_RESOLUTION_MS));
  }
  throw new Error(`no ${what} after 2000 turns of the loop`);
}

// A runtime of the test's making: figures it chose, monitors that count their starts and stops.
function standIn() {
  const counts = { enabled: 0, disabled: 0, resets: 0, observing: 0, disconnected: 0 };
  let samples = 3;
  const histogram = {
    min: 1e6,
    max: 8e6,
    mean: 2e6,
    stddev: 5e5,
    get count() {
      return samples;
    },
    percentile: (p: number) => p * 1e5,
    enable: () => void counts.enabled++,
    disable: () => void counts.disabled++,
    reset: () => {
      counts.resets++;
      samples = 0;
    },
  };
  type Entries = { getEntries(): { duration: number; detail?: unknown }[] };
  let delivered: ((list: Entries) => void) | undefined;
  class Observer {
    static readonly supportedEntryTypes = ["gc", "mark"];
    constructor(callback: (list: Entries) => void) {
      delivered = callback;
    }
    observe() {
      counts.observing++;
    }
    disconnect() {
      counts.disconnected++;
    }
  }
  const modules: Record<string, unknown> = {
    "node:perf_hooks": {
      monitorEventLoopDelay: () => histogram,
      PerformanceObserver: Observer,
      constants: {
        NODE_PERFORMANCE_GC_MAJOR: 4,
        NODE_PERFORMANCE_GC_MINOR: 1,
        NODE_PERFORMANCE_GC_INCREMENTAL: 8,
        NODE_PERFORMANCE_GC_WEAKCB: 16,
      },
    },
    "node:v8": {
      getHeapSpaceStatistics: () => [{
        space_name: "old_space",
        space_size: 4000,
        space_used_size: 3000,
        space_available_size: 1000,
        physical_space_size: 3500,
      }],
    },
  };
  const process = {
    cpuUsage: () => ({ user: 1_500_000, system: 250_000 }),
    memoryUsage: Object.assign(() => ({ rss: 1 }), { rss: () => 2048 }),
    uptime: () => 42.5,
    versions: { node: "24.0.0" },
    getBuiltinModule: (id: string) => modules[id],
  };
  return {
    globals: { process },
    counts,
    sample: () => void (samples = 5),
    gc: (entries: { duration: number; detail?: unknown }[]) =>
      delivered?.({ getEntries: () => entries }),
  };
}

describe("runtimeMetrics, on this runtime", () => {
  it(`reports CPU time, memory and uptime${HEAP ? ", V8's heap spaces" : ""}`, async () => {
    const { reader, provider, metrics } = measured();
    const stop = metrics.observe();
    try {
      const cpu = await reader.points("process.cpu.time");
      const user = valueOf(cpu, "cpu.mode", "user");
      const system = valueOf(cpu, "cpu.mode", "system");
      assert.ok(user !== undefined && user > 0, `user CPU time: ${user}`);
      assert.ok(system !== undefined && system >= 0, `system CPU time: ${system}`);
      work();
      const after = valueOf(await reader.points("process.cpu.time"), "cpu.mode", "user")!;
      assert.ok(after > user, `user CPU time ${user} s, then ${after} s after work`);
      const [memory] = await reader.points("process.memory.usage");
      assert.ok((memory.value as number) > 1024 * 1024, `resident memory: ${memory.value}`);
      const [uptime] = await reader.points("process.uptime");
      assert.ok((uptime.value as number) > 0, `uptime: ${uptime.value}`);
      const used = await reader.points("v8js.memory.heap.used");
      if (HEAP) {
        const old = valueOf(used, "v8js.heap.space.name", "old_space");
        assert.ok(old !== undefined && old > 0, `old_space used: ${old}`);
        const limit = valueOf(
          await reader.points("v8js.memory.heap.limit"),
          "v8js.heap.space.name",
          "old_space",
        )!;
        assert.ok(limit >= old, `old_space ${old} used of ${limit}`);
        for (const name of ["v8js.heap.space.available_size", "v8js.heap.space.physical_size"]) {
          assert.ok((await reader.points(name)).length > 0, `${name} has no points`);
        }
      } else {
        assert.deepEqual(used, [], "Bun reports V8's heap spaces");
      }
    } finally {
      stop();
      await provider.shutdown();
    }
  });

  it(`${LOOP_DELAY ? "reports" : "leaves out"} the event loop's delay`, async () => {
    const { reader, provider, metrics } = measured();
    const stop = metrics.observe();
    try {
      if (LOOP_DELAY) {
        const delays = await until("event loop delay", async () => {
          const found = await Promise.all(
            DELAYS.map((d) => reader.points(`nodejs.eventloop.delay.${d}`)),
          );
          return found.every((points) => points.length === 1)
            ? found.map(([point]) => point.value as number)
            : undefined;
        });
        const [min, max, , , p50, p90, p99] = delays;
        for (const value of delays) assert.ok(value >= 0 && Number.isFinite(value), `${delays}`);
        // Not the mean against min and max: the runtime's histogram rounds each to its buckets.
        assert.ok(min <= max && p50 <= p90 && p90 <= p99, `${delays}`);
      } else {
        assert.ok(!(await names(reader)).some((n) => n.startsWith("nodejs.eventloop")));
      }
    } finally {
      stop();
      await provider.shutdown();
    }
  });

  it(`${GC ? "reports" : "leaves out"} garbage collections`, async () => {
    const { reader, provider, metrics } = measured();
    const stop = metrics.observe();
    try {
      if (GC) {
        const points = await until("GC pause", async () => {
          // Garbage enough for a minor collection, at each turn until one is reported.
          let garbage: object[] | undefined = [];
          for (let i = 0; i < 200_000; i++) garbage.push({ i });
          garbage = undefined;
          const found = await reader.points("v8js.gc.duration");
          return found.length > 0 ? found : undefined;
        });
        for (const point of points) {
          assert.ok(["major", "minor", "incremental", "weakcb"].includes(
            point.attributes["v8js.gc.type"] as string,
          ));
          const value = point.value as Histogram;
          assert.ok(value.count > 0 && (value.sum ?? 0) >= 0, JSON.stringify(value));
        }
      } else {
        work();
        assert.ok(!(await names(reader)).includes("v8js.gc.duration"));
      }
    } finally {
      stop();
      await provider.shutdown();
    }
  });
});

describe("runtimeMetrics, on a runtime of the test's making", () => {
  it("reports each figure in the conventions' units", async () => {
    const runtime = standIn();
    const { reader, provider, metrics } = measured(runtime.globals);
    const stop = metrics.observe();
    const cpu = await reader.points("process.cpu.time");
    assert.deepEqual(
      cpu.map((p) => [p.attributes["cpu.mode"], p.value]),
      [["user", 1.5], ["system", 0.25]],
    );
    assert.deepEqual((await reader.points("process.memory.usage")).map((p) => p.value), [2048]);
    assert.deepEqual((await reader.points("process.uptime")).map((p) => p.value), [42.5]);
    const heap = {
      "v8js.memory.heap.used": 3000,
      "v8js.memory.heap.limit": 4000,
      "v8js.heap.space.available_size": 1000,
      "v8js.heap.space.physical_size": 3500,
    };
    for (const [name, value] of Object.entries(heap)) {
      assert.deepEqual(
        (await reader.points(name)).map((p) => [p.attributes, p.value]),
        [[{ "v8js.heap.space.name": "old_space" }, value]],
      );
    }
    runtime.sample();
    const delays = await Promise.all(
      DELAYS.map(async (d) => (await reader.points(`nodejs.eventloop.delay.${d}`))[0]?.value),
    );
    assert.deepEqual(delays, [0.001, 0.008, 0.002, 0.0005, 0.005, 0.009, 0.0099]);
    runtime.gc([
      { duration: 2.5, detail: { kind: 1 } },
      { duration: 40, detail: { kind: 4 } },
      { duration: 1, detail: { kind: 2 } },
    ]);
    const gc = await reader.points("v8js.gc.duration");
    assert.deepEqual(
      gc.map((p) => [p.attributes["v8js.gc.type"], (p.value as Histogram).sum]),
      [["minor", 0.0025], ["major", 0.04]],
    );
    stop();
    await provider.shutdown();
  });

  it("reads the loop's delay since the scrape before, and none when no sample was taken", async () => {
    const runtime = standIn();
    const { reader, provider, metrics } = measured(runtime.globals);
    const stop = metrics.observe();
    runtime.sample();
    await reader.collect();
    assert.equal(runtime.counts.resets, 1);
    // No sample since: nothing is observed (the reader keeps the value it had).
    await reader.collect();
    assert.equal(runtime.counts.resets, 1);
    stop();
    await provider.shutdown();
  });

  it("starts the monitors with the first observer and stops them with the last", async () => {
    const runtime = standIn();
    const { reader, provider, metrics } = measured(runtime.globals);
    const first = metrics.observe();
    const second = metrics.observe();
    assert.deepEqual(
      [runtime.counts.enabled, runtime.counts.observing],
      [1, 1],
      "each observer started its own monitors",
    );
    first();
    first();
    assert.deepEqual([runtime.counts.disabled, runtime.counts.disconnected], [0, 0]);
    assert.equal((await reader.points("process.uptime")).length, 1);
    second();
    assert.deepEqual([runtime.counts.disabled, runtime.counts.disconnected], [1, 1]);
    // Observed again: the same instruments, monitors started anew.
    const third = metrics.observe();
    assert.deepEqual([runtime.counts.enabled, runtime.counts.observing], [2, 2]);
    third();
    assert.deepEqual([runtime.counts.disabled, runtime.counts.disconnected], [2, 2]);
    await provider.shutdown();
  });

  it("reports nothing where there is no process, as on workerd", async () => {
    assert.deepEqual(runtimeSources({}), {});
    const { reader, provider, metrics } = measured({});
    const stop = metrics.observe();
    assert.deepEqual(await names(reader), []);
    stop();
    await provider.shutdown();
  });

  it("reports no zeros of a process that only stands in for one, as workerd's", async () => {
    // workerd, even without nodejs_compat, has a `process` whose memory and uptime are 0.
    const stub = {
      process: {
        memoryUsage: Object.assign(() => ({ rss: 0 }), { rss: () => 0 }),
        uptime: () => 0,
        cpuUsage: () => ({ user: 0, system: 0 }),
      },
    };
    const { reader, provider, metrics } = measured(stub);
    const stop = metrics.observe();
    assert.deepEqual(await names(reader), []);
    stop();
    await provider.shutdown();
  });

  it("leaves out what the runtime lacks or fails to read, and keeps the rest", async () => {
    const bare = {
      process: {
        uptime: () => 3,
        cpuUsage: () => {
          throw new Error("not implemented");
        },
      },
    };
    const { reader, provider, metrics } = measured(bare);
    const stop = metrics.observe();
    assert.deepEqual(await names(reader), ["process.uptime"]);
    stop();
    await provider.shutdown();
  });

  it("leaves out a monitor the runtime cannot start", async () => {
    const failing = {
      process: {
        getBuiltinModule: (id: string) =>
          id === "node:perf_hooks"
            ? {
              monitorEventLoopDelay: () => {
                throw new Error("not implemented");
              },
            }
            : undefined,
      },
    };
    const { reader, provider, metrics } = measured(failing);
    const stop = metrics.observe();
    assert.deepEqual(await names(reader), []);
    stop();
    await provider.shutdown();
  });
});

@RestController()
class RuntimeProbeController {
  @GetMapping("/runtime-probe")
  get(): string {
    return "ok";
  }
}

describe("/actuator/prometheus", () => {
  it("serves the process's series with no code, until the app closes", async () => {
    const app = await bootstrap({
      controllers: [RuntimeProbeController],
      config: { management: { endpoints: { web: { exposure: { include: "prometheus" } } } } },
      actuator: actuator(),
      logger: { error: () => {} },
    });
    const { runtime } = prometheusRegistry(api, { sdk, Serializer: PrometheusSerializer });
    const observing = runtime.observers;
    assert.ok(observing > 0, "the app does not observe the process");
    try {
      const scrape = async () =>
        await (await app.fetch(new Request("http://localhost/actuator/prometheus"))).text();
      const expected = [
        /^process_cpu_time_seconds_total\{cpu_mode="user",otel_scope_name="thaw"\} [0-9.e+-]+$/m,
        /^process_cpu_time_seconds_total\{cpu_mode="system",otel_scope_name="thaw"\} /m,
        /^# TYPE process_cpu_time_seconds_total counter$/m,
        /^process_memory_usage_bytes\{otel_scope_name="thaw"\} [1-9]/m,
        /^process_uptime_seconds\{otel_scope_name="thaw"\} /m,
        /^# TYPE process_uptime_seconds gauge$/m,
        ...HEAP
          ? [
            /^v8js_memory_heap_used_bytes\{v8js_heap_space_name="old_space",otel_scope_name="thaw"\} [1-9]/m,
          ]
          : [],
        ...LOOP_DELAY ? [/^nodejs_eventloop_delay_p99_seconds\{otel_scope_name="thaw"\} /m] : [],
        ...GC
          ? [
            /^v8js_gc_duration_seconds_bucket\{v8js_gc_type="[a-z]+",otel_scope_name="thaw",le="0.01"\} /m,
          ]
          : [],
      ];
      const text = await until("every series in the scrape", async () => {
        let garbage: object[] | undefined = [];
        for (let i = 0; i < 200_000; i++) garbage.push({ i });
        garbage = undefined;
        const text = await scrape();
        return expected.every((series) => series.test(text)) ? text : undefined;
      }).catch(async (error) => {
        const text = await scrape();
        const missing = expected.filter((series) => !series.test(text));
        throw new Error(`${error.message}: ${missing.join(", ")} not in\n${text}`);
      });
      if (!HEAP) assert.doesNotMatch(text, /^v8js_memory/m);
      if (!LOOP_DELAY) assert.doesNotMatch(text, /^nodejs_eventloop/m);
      if (!GC) assert.doesNotMatch(text, /^v8js_gc/m);
    } finally {
      await app.close();
    }
    assert.equal(runtime.observers, observing - 1, "the closed app still observes the process");
  });
});
