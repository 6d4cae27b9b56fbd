// What an edge worker carries. The default entry point reaches no YAML parser, scanner, server or
// OpenAPI generator, statically or by `import()`: each has an entry point of its own that only the
// apps using it import. The sizes themselves are a benchmark (`npm run bench:startup`), not a test.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions, type Plugin, stop } from "esbuild";
import { bundleWorkers, loadedChunks, WORKER_BUILD } from "../../tools/bundle_worker.ts";
import { tempDir } from "../temp_dir.ts";
import { nodeBuiltins } from "./workerd.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

// As the sample app is bundled for an edge runtime: ES modules, Node's modules and the Node adapter
// left outside.
const EDGE = {
  ...WORKER_BUILD,
  outdir: join(root, "dist", "bundle-contents"),
  write: false,
  metafile: true,
  logLevel: "silent",
} as const satisfies BuildOptions;

/** The input files of the chunks an entry loads before it runs (its static imports, transitively). */
async function loadedInputs(
  entry: string,
  plugins: Plugin[] = [],
): Promise<{ loaded: Set<string>; lazy: Set<string>; external: Set<string> }> {
  const result = await build({
    ...EDGE,
    entryPoints: [join(root, entry)],
    splitting: true,
    plugins,
  });
  const outputs = result.metafile.outputs;
  const chunks = loadedChunks(result.metafile);
  const loaded = new Set<string>();
  const lazy = new Set<string>();
  // What the bundle imports from outside (`node:*`), statically or by `import()`.
  const external = new Set<string>();
  for (const [path, output] of Object.entries(outputs)) {
    for (const input of Object.keys(output.inputs)) (chunks.has(path) ? loaded : lazy).add(input);
    for (const i of output.imports) if (i.external) external.add(i.path);
  }
  return { loaded, lazy, external };
}

const has = (inputs: Set<string>, part: string) => [...inputs].some((i) => i.includes(part));

/** An entry bundled into one file, as Wrangler bundles a worker: its inputs and its code. */
async function oneFile(entry: string): Promise<{ inputs: Set<string>; code: string }> {
  const result = await build({
    ...EDGE,
    entryPoints: [join(root, entry)],
    // Minified, so that what is left is code: the JSDoc examples name node: modules too.
    minify: true,
  });
  const [output] = Object.values(result.metafile.outputs);
  return {
    inputs: new Set(Object.keys(output.inputs)),
    code: new TextDecoder().decode(result.outputFiles[0].contents),
  };
}

// What only a server or a tool needs, each behind an entry point of its own: none of it may reach
// the bundle of a worker that imports the default entry alone.
const SERVER_ONLY = [
  // @thaw/thaw/config: the file and the YAML parser.
  "node_modules/js-yaml/",
  "src/config/load_config.ts",
  "src/config/yaml_config.ts",
  "src/config/yaml_lines.ts",
  // @thaw/thaw/scan.
  "src/context/component_scan.ts",
  // @thaw/thaw/server: the listeners and graceful shutdown.
  "src/runtime/listen.ts",
  "src/runtime/serve.ts",
  "src/runtime/node_listener.ts",
  "src/runtime/deno_listener.ts",
  "src/runtime/header_timeout.ts",
  "src/runtime/shutdown.ts",
  "src/runtime/unread_body.ts",
];
// @thaw/thaw/actuator: the endpoints, health's checks runner and its answers, and its keys.
const ACTUATOR = [
  "src/config/management_keys.ts",
  "src/actuator/actuator_endpoints.ts",
  "src/actuator/health_routes.ts",
  "src/actuator/health_check.ts",
  "src/actuator/health_settings.ts",
  "src/actuator/health.ts",
];
// @thaw/thaw/logging: the levels, the writer and its structured lines, the logger of beans, its
// keys (the core declares none under logging), and the access log, which only it turns on.
const LOGGING = ["src/config/logging_keys.ts", "src/logging/", "src/observe/access_log.ts"];
// @thaw/thaw/tasks: the executors, the decorators that run on them, and their keys.
const TASKS = ["src/config/task_keys.ts", "src/tasks/"];
// @thaw/thaw/openapi: the generator, its settings and the docs page.
const OPENAPI = [
  "src/openapi/open_api.ts",
  "src/openapi/openapi_options.ts",
  "src/openapi/openapi_document.ts",
  "src/openapi/openapi_operation.ts",
  "src/openapi/framework_responses.ts",
  "src/openapi/json_schema.ts",
  "src/openapi/openapi_routes.ts",
  "src/openapi/docs_page.ts",
];

// `@SseMapping`: its decorator brings the stream, the framing, the key's reading and the clock.
const SSE = [
  "src/web/sse_mapping.ts",
  "src/web/sse_stream.ts",
  "src/web/sse_frame.ts",
  "src/runtime/clock.ts",
  "src/runtime/streamed_answers.ts",
  "src/config/duration.ts",
];

describe("an edge worker bundled into one file, as Wrangler bundles it", () => {
  after(() => stop());

  // The users worker is secured: security() binds the caller with AsyncLocalStorage, from
  // node:async_hooks (workerd's `nodejs_als` flag gives it alone, config.capnp sets it), and reads
  // `public-key-location` with an import() of node:fs/promises that a key given inline never takes.
  // The storage worker is on S3: the file store's node: modules are import()s it never takes,
  // never hoisted to the top of the file.
  const allowed: Record<string, { node: string[]; dynamic: string[] }> = {
    "tests/fixtures/small_worker.ts": { node: [], dynamic: [] },
    "examples/users/worker_explicit.ts": {
      node: ["node:async_hooks", "node:fs/promises"],
      dynamic: ["node:fs/promises"],
    },
    "tests/fixtures/storage/s3_worker.ts": {
      node: ["node:crypto", "node:fs", "node:fs/promises", "node:path"],
      dynamic: ["node:crypto", "node:fs", "node:fs/promises", "node:path"],
    },
  };
  for (const [entry, { node, dynamic }] of Object.entries(allowed)) {
    it(`${entry}: carries no YAML parser, scanner or server, and no node: import but ${node.length === 0 ? "none" : node.join(", ")}`, async () => {
      const { inputs, code } = await oneFile(entry);
      for (const part of ["src/web/compile.ts", "node_modules/hono/"]) {
        assert.ok(has(inputs, part), `${part} should be in the bundle`);
      }
      for (const part of [...SERVER_ONLY, ...LOGGING, ...TASKS]) {
        assert.ok(!has(inputs, part), `${part} is in the bundle of ${entry}`);
      }
      // A worker without nodejs_compat cannot load a node: module it has no flag for.
      const nodeImports = [
        ...new Set([...code.matchAll(/["'](node:[^"']+)["']/g)].map((m) => m[1])),
      ];
      assert.deepEqual(nodeImports.sort(), node, `${entry} names ${nodeImports.join(", ")}`);
      if (dynamic.length === 0) {
        // No `import()` at all: whatever one names, esbuild inlines into the one file.
        assert.ok(!/\bimport\s*\(/.test(code), `${entry} has an import() left`);
      } else {
        const left = [...code.matchAll(/\bimport\s*\(\s*["']([^"']+)["']/g)].map((m) => m[1]);
        assert.deepEqual([...new Set(left)].sort(), dynamic, `${entry}: import() of ${left}`);
      }
      const hoisted = [...code.matchAll(/from\s*["'](node:[^"']+)["']/g)].map((m) => m[1]);
      assert.deepEqual(
        hoisted.filter((name) => !node.includes(name) || dynamic.includes(name)),
        [],
        `${entry} imports ${hoisted.join(", ")} at load`,
      );
    });
  }

  it("the parser of {name:regex} variables is loaded only by an app whose paths may hold one", async () => {
    const { loaded, lazy } = await loadedInputs("tests/fixtures/small_worker.ts");
    assert.ok(!has(loaded, "src/web/path_regex.ts"), "the small worker loads the regex parser");
    assert.ok(has(lazy, "src/web/path_regex.ts"), "the regex parser is not in a lazy chunk");
    // What the lazy chunk gives, an app with a regex in a path gets: its routes match by it.
    const { bootstrap, GetMapping, PathVariable, RequestMapping, RestController } = await import(
      "../../mod.ts"
    );
    @RestController()
    @RequestMapping("/n")
    class Numbers {
      @GetMapping("/{id:\\d+}", PathVariable("id", Number))
      get(id: number): string {
        return `number ${id}`;
      }
    }
    const app = await bootstrap({ controllers: [Numbers] });
    const ok = await app.fetch(new Request("http://x/n/42"));
    assert.equal(await ok.text(), "number 42");
    assert.equal((await app.fetch(new Request("http://x/n/4a"))).status, 404);
  });

  it("the generator is in the bundle of the worker that serves OpenAPI only", async () => {
    const [small, explicit, served] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("examples/users/worker_explicit.ts"),
      oneFile("examples/users/worker.ts"),
    ]);
    for (const part of OPENAPI) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
      assert.ok(!has(explicit.inputs, part), `${part} is in worker_explicit's bundle`);
      assert.ok(has(served.inputs, part), `${part} is missing from worker.ts's bundle`);
    }
    for (const part of SERVER_ONLY) {
      assert.ok(!has(served.inputs, part), `${part} is in worker.ts's bundle`);
    }
  });

  it("event streams are in the bundle of a worker with @SseMapping only", async () => {
    const [small, sse] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("tests/fixtures/sse_worker.ts"),
    ]);
    for (const part of SSE) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
      assert.ok(has(sse.inputs, part), `${part} is missing from the SSE worker's bundle`);
    }
  });

  it("a worker carries the readers of the binders it calls, and no other", async () => {
    // The small worker binds a path variable and a JSON body; the users app a query parameter too.
    const [small, users] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("examples/users/worker_explicit.ts"),
    ]);
    const formReaders = [
      "src/web/param_argument.ts",
      "src/web/form_reader.ts",
      "src/http/multipart.ts",
    ];
    for (const part of [...formReaders, "src/web/part_argument.ts", "src/web/header_argument.ts"]) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
    }
    for (const part of ["src/web/path_argument.ts", "src/web/body_argument.ts"]) {
      assert.ok(has(small.inputs, part), `${part} is missing from the small worker's bundle`);
    }
    for (const part of formReaders) {
      assert.ok(has(users.inputs, part), `${part} is missing from worker_explicit's bundle`);
    }
  });

  it("croner and the scheduler are in the bundle of a worker with a @Scheduled job only", async () => {
    const [small, explicit, scheduled] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("examples/users/worker_explicit.ts"),
      oneFile("tests/fixtures/scheduled_worker.ts"),
    ]);
    for (
      const part of [
        "node_modules/croner/",
        "src/scheduling/scheduler.ts",
        "src/scheduling/trigger.ts",
      ]
    ) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
      assert.ok(!has(explicit.inputs, part), `${part} is in worker_explicit's bundle`);
      assert.ok(
        has(scheduled.inputs, part),
        `${part} is missing from the scheduled worker's bundle`,
      );
    }
  });

  it("caching, interceptors and events are in the bundle of a worker that uses them only", async () => {
    const [small, explicit] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      // The sample app caches a lookup and publishes an event.
      oneFile("examples/users/worker_explicit.ts"),
    ]);
    for (
      const part of [
        "node_modules/lru-cache/",
        "src/cache/cacheable.ts",
        "src/cache/cache_interceptor.ts",
        "src/context/interceptors.ts",
        "src/events/event_multicaster.ts",
        "src/events/lifecycle_events.ts",
      ]
    ) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
      assert.ok(has(explicit.inputs, part), `${part} is missing from worker_explicit's bundle`);
    }
    // What bootstrap carries to check the caches of an app: one lookup, and its refusal of a
    // thaw.cache name when no method caches.
    const caches = [...small.inputs].filter((i) => i.includes("src/cache/"));
    assert.deepEqual(caches, ["src/cache/cache_hooks.ts"]);
    // Which cache name was meant is for the caching decorators to say: none is used here.
    assert.doesNotMatch(small.code, /the caches of the app's methods are/);
    // What bootstrap carries to find the events of an app with listeners: one lookup.
    const events = [...small.inputs].filter((i) => i.includes("src/events/"));
    assert.deepEqual(events, []);
  });

  it("the check of health indicators is in the bundle of a worker that has one only", async () => {
    const [small, checked] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("tests/fixtures/health_worker.ts"),
    ]);
    const part = "src/actuator/health_beans.ts";
    assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
    assert.ok(has(checked.inputs, part), `${part} is missing from health_worker's bundle`);
  });

  it("an app's own @Endpoint code is in the bundle of a worker that has one only", async () => {
    const [served, own] = await Promise.all([
      oneFile("examples/users/worker.ts"),
      oneFile("tests/fixtures/endpoint_worker.ts"),
    ]);
    for (const part of ["src/actuator/app_endpoints.ts", "src/actuator/endpoint_records.ts"]) {
      assert.ok(
        !has(served.inputs, part),
        `${part} is in worker.ts's bundle, which has no @Endpoint`,
      );
      assert.ok(has(own.inputs, part), `${part} is missing from endpoint_worker's bundle`);
    }
  });

  it("@Value and @ConfigurationProperties are in the bundle of a worker that uses them only", async () => {
    const [small, configured] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("tests/fixtures/configured_worker.ts"),
    ]);
    for (const part of ["src/context/value.ts", "src/context/configuration_properties.ts"]) {
      assert.ok(!has(small.inputs, part), `${part} is in the small worker's bundle`);
      assert.ok(has(configured.inputs, part), `${part} is missing from the configured worker's`);
    }
  });

  it("OpenTelemetry is in the bundle of the worker that hands it to actuator() only", async () => {
    const [small, explicit, served, main, ownEntry] = await Promise.all([
      oneFile("tests/fixtures/small_worker.ts"),
      oneFile("examples/users/worker_explicit.ts"),
      oneFile("examples/users/worker.ts"),
      oneFile("mod.ts"),
      oneFile("actuator.ts"),
    ]);
    const otel = "node_modules/@opentelemetry/";
    assert.ok(!has(small.inputs, otel), "OpenTelemetry is in the small worker's bundle");
    assert.ok(!has(explicit.inputs, otel), "OpenTelemetry is in worker_explicit's bundle");
    assert.ok(!has(main.inputs, otel), "OpenTelemetry is reachable from the default entry point");
    // The actuator's own imports of it are computed: only an app's import brings it in.
    assert.ok(!has(ownEntry.inputs, otel), "the actuator entry point bundles OpenTelemetry");
    for (const part of ["api/", "sdk-metrics/", "exporter-prometheus/"]) {
      assert.ok(
        has(served.inputs, otel + part),
        `${otel}${part} is missing from worker.ts's bundle`,
      );
    }
    // Its browser build: the Node one imports `os` and `util`, which a worker cannot load.
    assert.ok(
      !has(served.inputs, "/platform/node/"),
      "worker.ts bundles OpenTelemetry's Node build",
    );
  });

  it("each entry point alone carries what it is for, and the default one nothing of the others", async () => {
    const { exports } = JSON.parse(await readFile(join(root, "deno.json"), "utf8")) as {
      exports: Record<string, string>;
    };
    const main = await oneFile(exports["."]);
    // @thaw/thaw/cache-redis needs TCP sockets: no worker can bundle it.
    const redis = [
      "src/cache/redis_cache_manager.ts",
      "node_modules/redis/",
      "node_modules/@redis/",
    ];
    // @thaw/thaw/lock-sql: an app without replicas to coordinate has no use for it.
    const lockSql = "src/tasks/sql_lock_provider.ts";
    for (
      const part of [
        ...SERVER_ONLY,
        ...OPENAPI,
        ...ACTUATOR,
        ...LOGGING,
        "src/migrate/",
        "src/data/transactions.ts",
        "src/data/sql_client.ts",
        // @thaw/thaw/search: the search connections and the client's package.
        "src/search/",
        "node_modules/@opensearch-project/",
        ...redis,
        lockSql,
      ]
    ) {
      assert.ok(!has(main.inputs, part), `${part} is reachable from the default entry point`);
    }
    assert.ok(!/\bimport\s*\(/.test(main.code), "the default entry point has an import() left");
    assert.doesNotMatch(main.code, /["']node:/, "the default entry point names a node: module");
    const own: Record<string, string> = {
      "./config": "node_modules/js-yaml/",
      "./scan": "src/context/component_scan.ts",
      "./openapi": "src/openapi/openapi_document.ts",
      "./actuator": "src/actuator/health_routes.ts",
      "./logging": "src/observe/access_log.ts",
      "./server": "src/runtime/serve.ts",
      "./lock-sql": lockSql,
    };
    for (const [name, part] of Object.entries(own)) {
      assert.ok(has((await oneFile(exports[name])).inputs, part), `${name} lacks ${part}`);
    }
  });

  for (const entry of ["examples/users/worker.ts", "examples/users/worker_explicit.ts"]) {
    it(`${entry}: neither SQLite nor the migration runner is in the bundle, not even lazily`, async () => {
      const { loaded, lazy, external } = await loadedInputs(entry);
      const all = new Set([...loaded, ...lazy]);
      assert.ok(has(all, "examples/users/storage/memory_user_repository.ts"));
      // The runners (and the migrate.ts entry point): both loops, each runner, its drivers.
      const runner = [
        "src/migrate/engine.ts",
        "src/migrate/run/",
        "src/migrate/sql/",
        "src/migrate/search/",
      ];
      assert.ok(![...all].some((i) => /(^|\/)migrate\.ts$/.test(i)), "migrate.ts is in the bundle");
      const sqlStorage = [
        "examples/users/storage/sql_user_repository.ts",
        "examples/users/storage/sql_locks.ts",
        "src/data/",
      ];
      for (const part of [...runner, ...sqlStorage]) {
        assert.ok(!has(all, part), `${part} is in the worker's bundle`);
      }
      assert.ok(!external.has("node:sqlite"), `the worker imports node:sqlite: ${[...external]}`);
    });
  }

  it("examples/products/worker.ts: search() brings no SQL driver, not even lazily", async () => {
    // Under nodejs_compat, as the client's package needs.
    const { loaded, lazy } = await loadedInputs("examples/products/worker.ts", [nodeBuiltins]);
    const all = new Set([...loaded, ...lazy]);
    assert.ok(has(loaded, "src/search/search_setup.ts"));
    for (
      const part of ["src/migrate/sql/", "src/sql/", "node_modules/pg/", "node_modules/mysql2/"]
    ) {
      assert.ok(!has(all, part), `${part} is in the worker's bundle`);
    }
  });

  it("the one-file worker bundles of the sample app import no node: module at load but node:async_hooks", async () => {
    // users.js serves OpenAPI: the docs page, which it turns off, reads its files with `import()`
    // of node:fs; hoisted to the top of the file, a `node:` import would be evaluated at load and
    // fail on workerd without `nodejs_compat`, whether or not the app takes that path. The one
    // loaded is security()'s AsyncLocalStorage, which the `nodejs_als` flag gives.
    await using dir = await tempDir("thaw-bundle-");
    await bundleWorkers(dir.path);
    for (const file of ["users.js", "users_explicit.js"]) {
      const code = await readFile(join(dir.path, file), "utf8");
      const hoisted = [...code.matchAll(/from\s*"(node:[^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(
        hoisted,
        ["node:async_hooks"],
        `${file} imports ${hoisted.join(", ")} at load`,
      );
    }
    const capnp = await readFile(join(dir.path, "config.capnp"), "utf8");
    assert.equal(capnp.match(/compatibilityFlags = \["nodejs_als"\]/g)?.length, 2, capnp);
  });
});
