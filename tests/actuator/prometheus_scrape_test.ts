// integration test: promtool and a Prometheus server from Debian's prometheus package
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { metrics } from "@opentelemetry/api";
import {
  bootstrap,
  Cacheable,
  GetMapping,
  PathVariable,
  RestController,
  Scheduled,
  Service,
} from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { data, SqlClient } from "../../data.ts";
import { listen } from "../../server.ts";
import type { Server } from "../../src/runtime/serve.ts";
import { RUNTIME } from "../runtime.ts";
import { freePort } from "../helpers.ts";
import { tempDir } from "../temp_dir.ts";
import { datasourceEntries, KINDS } from "../sql/pools.ts";

// Each runtime's run of this file scrapes its own routes, so that a query finds this run's.
const ROUTE = `/scrape/${RUNTIME}/{id}`;

@RestController()
class ScrapeController {
  @GetMapping(ROUTE, PathVariable("id", Number))
  get(id: number) {
    return { id };
  }
}

// A cache and a job, so that the scrape has the caches' and the scheduler's series.
@Service()
class ScrapeWork {
  @Cacheable(`scrape-${RUNTIME}`)
  async square(n: number): Promise<number> {
    return await Promise.resolve(n * n);
  }
  @Scheduled({ cron: "0 4 * * *" })
  sweep(): void {}
  @Scheduled({ cron: "0 4 * * *" })
  fail(): void {
    throw new RangeError("out of range");
  }
}

// Waits on a state, not a clock: `check` until it answers, bounded only against a server that
// never comes (minutes, far past any loaded machine's scrape).
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the Prometheus exposition, read by Prometheus's own tools", () => {
  let server: Server;
  let origin: string;
  const database = datasourceEntries();

  before(async () => {
    // A datasource, so that the scrape has the pool's and the statements' series: one connection,
    // which a transaction holds while another call waits for it and gives up (a timeout). It
    // stays idle until Prometheus scrapes, however late a loaded machine lets it start.
    const { entry } = await database(KINDS[0], "main", {
      pool: { "max-size": 1, "acquire-timeout": 200, "idle-timeout": "1h" },
    });
    const app = await bootstrap({
      controllers: [ScrapeController],
      components: [ScrapeWork],
      logger: { error: () => {}, info: () => {} },
      config: {
        management: { endpoints: { web: { exposure: { include: "prometheus" } } } },
        datasource: [entry],
      },
      actuator: actuator(),
      data: data(),
    });
    const sql = app.getBean(SqlClient);
    await sql.query`SELECT 1 AS one`;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const holding = sql.transaction(async () => {
      await sql.query`SELECT 1 AS one`;
      entered();
      await held;
    });
    await inside;
    const timedOut = await sql.query`SELECT 2 AS two`.catch((error: unknown) => error);
    release();
    await holding;
    assert.equal((timedOut as { reason?: string }).reason, "timeout");
    await app.getBean(ScrapeWork).square(3);
    await app.getBean(ScrapeWork).square(3);
    await app.scheduled({ cron: "0 4 * * *" }).catch(() => {});
    server = await listen(app, { port: 0, hostname: "127.0.0.1", quiet: true, signals: false });
    origin = `http://127.0.0.1:${server.port}`;
    for (let id = 0; id < 5; id++) await (await fetch(`${origin}/scrape/${RUNTIME}/${id}`)).text();
    // Names that end the same from other meters: an instrumentation library's request histogram,
    // a unit that names what another's name says.
    const other = metrics.getMeter("other-instrumentation");
    other.createHistogram("http.server.request.duration", { unit: "s" }).record(0.2);
    other.createHistogram("scrape.wait", { unit: "s" }).record(1);
    other.createHistogram("scrape.wait_seconds").record(2);
    other.createCounter("scrape.jobs").add(1);
    metrics.getMeter("shop").createCounter("scrape.jobs_total").add(1);
    await (await fetch(`${origin}/no/such/path`)).text();
  });

  after(() => server.close());

  it("passes promtool check metrics", async () => {
    // promtool checks the text format alone: what a scraper that does not ask for OpenMetrics gets.
    const res = await fetch(`${origin}/actuator/prometheus`);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    assert.match(text, /http_server_request_duration_seconds_bucket\{/);
    assert.match(
      text,
      /^cache_gets_total\{cache="scrape-[a-z]+",cache_manager="cacheManager",result="hit",/m,
    );
    assert.match(
      text,
      /^tasks_scheduled_execution_seconds_bucket\{code_namespace="ScrapeWork",code_function="fail",outcome="ERROR",exception="RangeError",/m,
    );
    // The process's series, checked with the rest: present on every runtime the tests run on.
    assert.match(text, /^process_cpu_time_seconds_total\{cpu_mode="user",/m);
    assert.match(text, /^process_memory_usage_bytes\{/m);
    assert.match(text, /^process_uptime_seconds\{/m);
    // The datasource's: each series its pool and statements serve.
    for (
      const series of [
        "db_client_operation_duration_seconds_bucket",
        'db_client_connections{db_client_connection_pool_name="main",db_client_connection_state="idle"',
        'db_client_connections{db_client_connection_pool_name="main",db_client_connection_state="used"',
        'db_client_connection_max{db_client_connection_pool_name="main"',
        'db_client_connection_pending_requests{db_client_connection_pool_name="main"',
        'db_client_connection_wait_time_seconds_bucket{db_client_connection_pool_name="main"',
        'db_client_connection_timeouts_total{db_client_connection_pool_name="main"',
      ]
    ) {
      assert.ok(text.includes(`\n${series}`), `${series} in:\n${text}`);
    }
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(check.error, undefined, "promtool must be installed (npm test installs it)");
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  });

  it("in OpenMetrics, is read by Prometheus's OpenMetrics parser (promtool's import)", async () => {
    const res = await fetch(`${origin}/actuator/prometheus`, {
      headers: { accept: "application/openmetrics-text;version=1.0.0,text/plain;q=0.5" },
    });
    assert.equal(
      res.headers.get("content-type"),
      "application/openmetrics-text; version=1.0.0; charset=utf-8",
    );
    const om = await res.text();
    assert.match(om, /^# TYPE scrape_jobs counter$/m);
    assert.match(om, /^# TYPE process_cpu_time_seconds counter$/m);
    assert.match(om, /^# UNIT process_uptime_seconds seconds$/m);
    // The import takes timestamped samples only: each sample gets the same one, in seconds.
    const now = Math.floor(Date.now() / 1000);
    const stamped = om.replace(/^([^#\n].*)$/gm, `$1 ${now}`);
    await using dir = await tempDir("thaw-openmetrics-");
    await writeFile(join(dir.path, "scrape.om"), stamped);
    const check = spawnSync(
      "promtool",
      [
        "tsdb",
        "create-blocks-from",
        "openmetrics",
        "--quiet",
        join(dir.path, "scrape.om"),
        join(dir.path, "data"),
      ],
      { encoding: "utf8" },
    );
    assert.equal(check.error, undefined, "promtool must be installed (npm test installs it)");
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  });

  it("is scraped by a Prometheus server, whose API answers the request count by route and the process, cache and job series", async () => {
    await using dir = await tempDir("thaw-prometheus-");
    const port = await freePort();
    await writeFile(
      join(dir.path, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 2s",
        // Prometheus's default timeout, 10s, is capped at the interval: a loaded machine's scrape
        // may take that long, which says nothing of the exposition.
        "  scrape_timeout: 2s",
        "scrape_configs:",
        "  - job_name: thaw",
        "    metrics_path: /actuator/prometheus",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${server.port}"]`,
        "",
      ].join("\n"),
    );
    const prometheus = spawn("prometheus", [
      `--config.file=${join(dir.path, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir.path, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    prometheus.stderr!.on("data", (chunk) => (log += chunk));
    const exited = new Promise<number | null>((r) => prometheus.once("exit", r));
    const api = async <T>(path: string): Promise<T> =>
      (await (await fetch(`http://127.0.0.1:${port}/api/v1/${path}`)).json() as { data: T }).data;
    try {
      // Prometheus 2.42 asks for OpenMetrics first: a scrape its strict parser refused would leave
      // the target down, naming why. A scrape that ran out of time (a starved machine) is not an
      // answer about the exposition: the next scrape is waited for.
      const target = await Promise.race([
        until("Prometheus to scrape the app once", async () => {
          const { activeTargets } = await api<{
            activeTargets: { health: string; lastError: string }[];
          }>("targets");
          const [first] = activeTargets;
          if (first === undefined || first.health === "unknown") return undefined;
          return first.health === "down" && /deadline exceeded/i.test(first.lastError)
            ? undefined
            : first;
        }),
        exited.then((code) => {
          throw new Error(`prometheus exited (${code}): ${log.slice(-2000)}`);
        }),
      ]);
      assert.deepEqual({ health: target.health, lastError: target.lastError }, {
        health: "up",
        lastError: "",
      });
      const query = encodeURIComponent(
        `sum by (http_route) (http_server_request_duration_seconds_count{http_route="${ROUTE}"})`,
      );
      const value = await Promise.race([
        until("Prometheus to scrape the app", async () => {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${query}`);
          const body = await res.json() as {
            data: { result: { metric: Record<string, string>; value: [number, string] }[] };
          };
          const [first] = body.data.result;
          return first === undefined
            ? undefined
            : { route: first.metric.http_route, count: first.value[1] };
        }),
        exited.then((code) => {
          throw new Error(`prometheus exited (${code}): ${log.slice(-2000)}`);
        }),
      ]);
      assert.deepEqual(value, { route: ROUTE, count: "5" });
      // The series no code asked for, in the same scrape: the process's, the cache's, the jobs'.
      const instant = async (promql: string) => {
        const { result } = await api<{ result: { value: [number, string] }[] }>(
          `query?query=${encodeURIComponent(promql)}`,
        );
        return result[0]?.value[1];
      };
      assert.ok(Number(await instant('process_cpu_time_seconds_total{cpu_mode="user"}')) > 0);
      assert.ok(Number(await instant("process_memory_usage_bytes")) > 0);
      assert.equal(
        await instant(
          'db_client_connections{db_client_connection_pool_name="main",db_client_connection_state="idle"}',
        ),
        "1",
      );
      assert.equal(
        await instant('db_client_connection_timeouts_total{db_client_connection_pool_name="main"}'),
        "1",
      );
      const cache = `cache="scrape-${RUNTIME}"`;
      assert.equal(await instant(`cache_gets_total{${cache},result="hit"}`), "1");
      assert.equal(await instant(`cache_gets_total{${cache},result="miss"}`), "1");
      assert.equal(await instant(`cache_puts_total{${cache}}`), "1");
      assert.equal(
        await instant(
          'tasks_scheduled_execution_seconds_count{code_namespace="ScrapeWork",' +
            'code_function="fail",outcome="ERROR",exception="RangeError"}',
        ),
        "1",
      );
      assert.equal(
        await instant(
          'tasks_scheduled_execution_seconds_count{code_function="sweep",outcome="SUCCESS"}',
        ),
        "1",
      );
      // Read as OpenMetrics: the counter's family is named without `_total`, and the histogram
      // has a unit, which the text format has no place for.
      const counters = await api<Record<string, { type: string }[]>>(
        "metadata?metric=scrape_jobs",
      );
      assert.equal(counters.scrape_jobs?.[0]?.type, "counter", JSON.stringify(counters));
      const histogram = await api<{ type: string; unit: string }[]>(
        `targets/metadata?match_target=${encodeURIComponent('{job="thaw"}')}` +
          "&metric=http_server_request_duration_seconds",
      );
      assert.deepEqual([histogram[0]?.type, histogram[0]?.unit], ["histogram", "seconds"]);
    } finally {
      prometheus.kill("SIGKILL");
      await exited;
      await rm(dir.path, { recursive: true, force: true });
    }
  });
});
