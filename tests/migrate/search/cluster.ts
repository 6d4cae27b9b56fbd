import { checkReport } from "../report_shape.ts";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { runCaptured } from "../run_cli.ts";
import { type TempDir, tempDir } from "../../temp_dir.ts";
import type { RunReport } from "../../../src/migrate/run_report.ts";
import type { SearchConnection } from "../../../src/migrate/search/search_connection.ts";
import type { Clock } from "../../../src/runtime/clock.ts";
import { type Distribution, distributionOf } from "../../../src/migrate/search/distribution.ts";
import {
  runtimeTransport,
  type TransportFactory,
} from "../../../src/migrate/search/http/transport.ts";

/** The node `tools/opensearch.sh start` runs (the README's test command starts it). */
export const OPENSEARCH_URL: string = process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9200";

// deno-lint-ignore no-explicit-any -- the cluster answers arbitrary JSON that tests read freely
type Json = any;

/** Calls the cluster directly, to check what the runner did there. */
export function os(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  return callNode(OPENSEARCH_URL, method, path, body, "tools/opensearch.sh start");
}

/**
 * Calls the node at `url`; a string body is sent as NDJSON (a `_bulk`), anything else as JSON. A
 * node that does not answer fails the test, saying what starts it (`start`): nothing skips.
 * `signal` gives up on the call.
 */
export async function callNode(
  url: string,
  method: string,
  path: string,
  body: unknown,
  start: string,
  signal?: AbortSignal,
): Promise<{ status: number; body: Json }> {
  let response: Response;
  try {
    response = await fetch(url + path, {
      method,
      ...(signal === undefined ? {} : { signal }),
      headers: body === undefined ? {} : {
        "content-type": typeof body === "string" ? "application/x-ndjson" : "application/json",
      },
      body: body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body),
    });
  } catch (error) {
    throw new Error(
      `OpenSearch is not reachable at ${url}: start it with ${start} (npm test does this) ` +
        `(${(error as Error).message})`,
    );
  }
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** What the node at OPENSEARCH_URL is, read from its `GET /` as the runner reads it. */
export async function distribution(): Promise<Distribution> {
  const root = await os("GET", "/");
  assert.equal(root.status, 200, `GET / on ${OPENSEARCH_URL}`);
  return distributionOf(root.body);
}

/** One request as the transport saw it. */
export interface Sent {
  readonly method: string;
  readonly path: string;
}

/** A transport that records every request it sends, around the runtime's real one. */
export function recording(
  sent: Sent[],
  inner: TransportFactory = runtimeTransport,
): TransportFactory {
  return async (options) => {
    const transport = await inner(options);
    return {
      fetch: (url, init, via) => {
        sent.push({ method: init.method ?? "GET", path: url.pathname + url.search });
        return transport.fetch(url, init, via);
      },
      close: () => transport.close(),
    };
  };
}

/** Requests that change something on the cluster (searches are reads). */
export function writes(sent: readonly Sent[]): Sent[] {
  return sent.filter((s) =>
    s.method !== "GET" && s.method !== "HEAD" && !s.path.endsWith("/_search")
  );
}

/** The result of one CLI run. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  readonly sent: Sent[];
  /** The `--json` report, when asked for. */
  readonly report?: RunReport;
}

/**
 * A temporary config folder and migrations root for one connection with its own records index;
 * `await using` removes its folders (the records index stays: some tests read it after).
 */
export class Workspace implements AsyncDisposable {
  readonly id: string = `t${crypto.randomUUID().slice(0, 8)}`;
  readonly recordsIndex: string = `fm_${this.id}`;
  readonly root: string;
  readonly configDir: string;
  readonly #base: TempDir;

  private constructor(base: TempDir) {
    this.#base = base;
    this.root = join(base.path, "migrations");
    this.configDir = join(base.path, "config");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#base[Symbol.asyncDispose]();
  }

  /**
   * Creates the folders and an application.yml for connection `id`: on the test node unless
   * `hosts` says otherwise, with `settings` (YAML lines of the connection) and `migrations`
   * (YAML lines under its `migrations:`) added.
   */
  static async create(
    options: { hosts?: readonly string[]; settings?: string; migrations?: string } = {},
  ): Promise<Workspace> {
    const ws = new Workspace(await tempDir("thaw-search-"));
    const hosts = (options.hosts ?? [OPENSEARCH_URL]).map((h) => JSON.stringify(h)).join(", ");
    try {
      await mkdir(ws.configDir, { recursive: true });
      await writeFile(
        join(ws.configDir, "application.yml"),
        `search:\n  - name: ${ws.id}\n    hosts: [${hosts}]\n${options.settings ?? ""}` +
          `    migrations:\n      enabled: true\n      index: ${ws.recordsIndex}\n` +
          (options.migrations ?? ""),
      );
    } catch (error) {
      await ws[Symbol.asyncDispose]();
      throw error;
    }
    return ws;
  }

  /**
   * Plants a lock as another runner would hold it (its records index created first); `holder`
   * may leave fields out, as a malformed lock would.
   */
  async plantLock(holder: Record<string, unknown>): Promise<void> {
    await os("PUT", `/${this.recordsIndex}`, { settings: { number_of_replicas: 0 } });
    const doc = { owner: "other", acquired_at: new Date().toISOString(), ...holder };
    const created = await os("PUT", `/${this.recordsIndex}/_create/lock-${this.id}`, doc);
    assert.equal(created.status, 201);
  }

  /**
   * The connection as the configuration would give it, reached through `host` (the test node by
   * default), for tests that drive a store, a client or a target directly.
   */
  connection(host: string = OPENSEARCH_URL): SearchConnection {
    return {
      name: this.id,
      hosts: [new URL(host)],
      sslVerification: true,
      timeoutMs: 30_000,
      connectTimeoutMs: 5_000,
      proxy: undefined,
      migrationsEnabled: true,
      strictOrder: false,
      validateOnMigrate: false,
      recordsIndex: this.recordsIndex,
      lockLeaseMs: 120_000,
    };
  }

  /** Sets `migrations.enabled: false` on the connection. */
  async disable(): Promise<void> {
    const file = join(this.configDir, "application.yml");
    await writeFile(
      file,
      (await readFile(file, "utf8")).replace("enabled: true", "enabled: false"),
    );
  }

  /** Plants the lock of a live runner on another host, which holds it for ten more minutes. */
  plantLiveLock(): Promise<void> {
    return this.plantLock({
      host: "elsewhere",
      pid: 42,
      expires_at: new Date(Date.now() + 600_000).toISOString(),
    });
  }

  /** Writes a migration file of the connection (JSON values are serialised). */
  async file(path: string, content: unknown): Promise<void> {
    const file = join(this.root, this.id, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }

  /** Runs the CLI in-process with `-m search -c <config> --sqlPath <root>` and `args`. */
  run(...args: string[]): Promise<Run> {
    return this.runWith({}, ...args);
  }

  /** As {@linkcode Workspace.run}, the locks on `clock` when given (a fake clock's virtual time). */
  async runWith(options: { readonly clock?: Clock }, ...args: string[]): Promise<Run> {
    const sent: Sent[] = [];
    const captured = await runCaptured(
      ["-m", "search", "-c", this.configDir, "--sqlPath", this.root, ...args],
      { transport: recording(sent), ...options },
    );
    const result: Run = { ...captured, sent };
    // Every report a test reads is checked against the documented shape first.
    if (args.includes("--json")) {
      const report = JSON.parse(result.out);
      checkReport(report);
      return { ...result, report };
    }
    return result;
  }

  /** Runs and expects exit code 0. */
  async ok(...args: string[]): Promise<Run> {
    const run = await this.run(...args);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    return run;
  }
}

const keyword = { type: "keyword" } as const;

/**
 * The mappings the runner gave its records index before records named their writer (no
 * `executed_by`): what an index made by that version holds.
 */
export const EARLIER_RECORDS_MAPPINGS = {
  dynamic: false,
  properties: {
    migration_path: keyword,
    connection: keyword,
    content_hash: keyword,
    executed_at: { type: "date" },
    execution_ms: { type: "long" },
    request: { properties: { method: keyword, path: keyword } },
    runner_version: keyword,
    owner: keyword,
    expires_at: { type: "date" },
  },
} as const;
