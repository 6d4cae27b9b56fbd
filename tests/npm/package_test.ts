// The npm package, as a Node user gets it: packed, installed into a fresh project, compiled by
// that project's TypeScript and run by plain Node, with no loader. Node's part of the suite only.
// part: other (its indices and templates are named for it alone; its minutes go to compiling
// and installing, not to the search node, so it runs beside the search lane, not in it)
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { SQLITE } from "../sqlite.ts";
import { OPENSEARCH_URL, os } from "../migrate/search/cluster.ts";
import {
  createDatabase,
  DB_PASSWORD,
  DB_USER,
  MARIADB_URL,
  POSTGRES_URL,
} from "../migrate/sql/databases.ts";
import { startForwardProxy } from "../migrate/search/servers.ts";
import { suiteTempDirs, tempDir } from "../temp_dir.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const exec = promisify(execFile);
// The optional peer dependencies: what a web-only install must not bring.
const DRIVERS = [
  "pg",
  "pg-connection-string",
  "mysql2",
  "undici",
  "redis",
  "ws",
  "@opensearch-project/opensearch",
];
// Whatever `node` the package's bin and npx start is the Node running this test.
const env = {
  ...process.env,
  NO_COLOR: "1",
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
};

/** Runs a command; `code` is its exit code (0 on success), never a thrown error. */
async function sh(command: string, args: string[], cwd: string) {
  try {
    return { code: 0, ...await exec(command, args, { cwd, env }) };
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string; code?: number };
    return { code: e.code ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
  }
}

// A controller for ENTRY_ALONE, in a module of its own: imported after the entry under test.
const ENTRY_PING = `import { GetMapping, RestController } from "@thaw/thaw";

@RestController()
export class Ping {
  @GetMapping("/ping")
  ping(): string {
    return "pong";
  }
}
`;

// One entry point imported alone (\`node main.js <entry> <folder>\`) and used for what it is for;
// the empty folder is the test's, for the files an entry reads.
const ENTRY_ALONE = `import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [entry, dir] = process.argv.slice(2);
switch (entry) {
  case ".": {
    const { bootstrap } = await import("@thaw/thaw");
    const { Ping } = await import("./ping.js");
    const app = await bootstrap({ controllers: [Ping] });
    assert.equal(await (await app.fetch(new Request("http://localhost/ping"))).text(), "pong");
    break;
  }
  case "./config": {
    const { loadConfig } = await import("@thaw/thaw/config");
    await writeFile(join(dir, "application.yml"), "server:\\n  port: \${PORT:8081}\\n");
    const config = await loadConfig(join(dir, "application.yml"), { env: {} });
    assert.deepEqual(config.values, { server: { port: "8081" } });
    break;
  }
  case "./scan": {
    const { scanComponents } = await import("@thaw/thaw/scan");
    await mkdir(join(dir, "src"));
    const ping = new URL("./ping.js", import.meta.url).href;
    await writeFile(join(dir, "src", "ping.mjs"), \`export { Ping } from \${JSON.stringify(ping)};\`);
    const found = await scanComponents([pathToFileURL(join(dir, "src"))]);
    assert.deepEqual(found.map((c) => c.name), ["Ping"]);
    break;
  }
  case "./openapi": {
    const { openApi, openApiDocument } = await import("@thaw/thaw/openapi");
    const { bootstrap } = await import("@thaw/thaw");
    const { Ping } = await import("./ping.js");
    const app = await bootstrap({ controllers: [Ping], openapi: openApi({ docs: false }) });
    const doc = await (await app.fetch(new Request("http://localhost/openapi.json"))).json();
    assert.deepEqual(Object.keys(doc.paths), ["/ping"]);
    assert.equal((await openApiDocument(app)).openapi, "3.1.0");
    break;
  }
  case "./actuator": {
    const { actuator } = await import("@thaw/thaw/actuator");
    const { bootstrap } = await import("@thaw/thaw");
    const { Ping } = await import("./ping.js");
    const app = await bootstrap({ controllers: [Ping], actuator: actuator() });
    const health = await app.fetch(new Request("http://localhost/actuator/health"));
    assert.deepEqual(await health.json(), { status: "UP" });
    break;
  }
  case "./logging": {
    const { logging, LoggingSystem } = await import("@thaw/thaw/logging");
    const { bootstrap } = await import("@thaw/thaw");
    const { Ping } = await import("./ping.js");
    const lines: string[] = [];
    const app = await bootstrap({
      controllers: [Ping],
      logging: logging(),
      logger: { error: (line: string) => lines.push(line), info: (line: string) => lines.push(line) },
      config: { logging: { access: { enabled: true }, structured: { format: { console: "ecs" } } } },
    });
    await app.fetch(new Request("http://localhost/ping"));
    assert.equal(JSON.parse(lines[0])["log.logger"], "thaw.access");
    assert.equal(app.getBean(LoggingSystem).loggers()[0].name, "ROOT");
    break;
  }
  case "./server": {
    const { listen } = await import("@thaw/thaw/server");
    const { bootstrap } = await import("@thaw/thaw");
    const { Ping } = await import("./ping.js");
    const app = await bootstrap({ controllers: [Ping] });
    const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
    assert.equal(await (await fetch(\`\${server.url}/ping\`)).text(), "pong");
    await server.close();
    break;
  }
  case "./migrate": {
    const { readDatasource } = await import("@thaw/thaw/migrate");
    await writeFile(join(dir, "application.yml"), 'datasource:\\n  - name: main\\n    url: "sqlite:./main.db"\\n');
    const main = await readDatasource({ config: dir, name: "main", env: {} });
    assert.equal(main.location, join(process.cwd(), "main.db"));
    break;
  }
  case "./cache-redis": {
    const { RedisCacheManager } = await import("@thaw/thaw/cache-redis");
    // Over a client of one's own, which needs no \`redis\` package.
    const stored = new Map<string, string>();
    const client = {
      sendCommand: (args: ReadonlyArray<string | Uint8Array>) => {
        const [command, key, value] = args.map(String);
        if (command === "SET") stored.set(key, value);
        return Promise.resolve(command === "GET" ? stored.get(key) ?? null : "OK");
      },
    };
    const users = new RedisCacheManager({ client }).getCache("users");
    await users.put("[7]", { id: 7 }, undefined);
    assert.deepEqual(await users.get("[7]"), { id: 7 });
    assert.deepEqual([...stored], [["thaw:cache:users:[7]", '{"id":7}']]);
    // Its own client needs \`redis\`, an optional peer dependency this install does not have.
    await assert.rejects(new RedisCacheManager().open(), /RedisCacheManager needs the redis client: npm install redis/);
    break;
  }
  case "./lock-sql": {
    const { SqlLockProvider } = await import("@thaw/thaw/lock-sql");
    // Over a query of one's own, which needs no driver: taken when the insert gives its row back.
    const statements: string[] = [];
    const provider = new SqlLockProvider({
      dialect: "postgres",
      query: (sql: string) => {
        statements.push(sql.split(" ")[0]);
        return Promise.resolve(sql.startsWith("INSERT") ? [{ locked_by: "a" }] : []);
      },
    });
    const held = await provider.acquire({ key: "digest", waitMs: 0, leaseMs: 60_000 });
    await held!.release();
    assert.deepEqual(statements, ["INSERT", "DELETE"]);
    break;
  }
  case "./data": {
    const { bootstrap } = await import("@thaw/thaw");
    const { data, Propagation, SqlClient } = await import("@thaw/thaw/data");
    assert.equal(Propagation.NESTED, "NESTED");
    assert.equal(typeof SqlClient.identifier, "function");
    // A PostgreSQL datasource needs \`pg\`, an optional peer dependency this install does not have.
    await assert.rejects(
      bootstrap({
        config: { datasource: [{ name: "main", url: "postgres://127.0.0.1:1/shop" }] },
        data: data(),
      }),
      /npm install pg pg-connection-string/,
    );
    break;
  }
  case "./search": {
    const { bootstrap } = await import("@thaw/thaw");
    const { search, SearchClient } = await import("@thaw/thaw/search");
    assert.equal({} instanceof SearchClient, false);
    // Its client is the OpenSearch package, an optional peer dependency this install does not have.
    await assert.rejects(
      bootstrap({
        config: { search: [{ name: "main", hosts: "http://127.0.0.1:1" }] },
        search: search(),
      }),
      /search connection "main" needs the OpenSearch client: npm install @opensearch-project.opensearch/,
    );
    break;
  }
  case "./tasks": {
    const { bootstrap } = await import("@thaw/thaw");
    const { tasks, TaskRejectedError } = await import("@thaw/thaw/tasks");
    assert.equal(new TaskRejectedError("default", "full").executor, "default");
    const app = await bootstrap({ tasks: tasks() });
    await app.close();
    break;
  }
  case "./jobs": {
    const { bootstrap } = await import("@thaw/thaw");
    const { data } = await import("@thaw/thaw/data");
    const { jobs, JobHandler, JobQueue } = await import("@thaw/thaw/jobs");
    assert.equal(typeof JobHandler("mail"), "function");
    const app = await bootstrap({
      config: { datasource: [{ name: "main", url: "sqlite::memory:" }] },
      data: data(),
      jobs: jobs(),
    });
    // Refused before anything is written: a Date is no JSON.
    await assert.rejects(
      app.getBean(JobQueue).enqueue("mail", { at: new Date(0) }),
      /the payload must be JSON: payload."at". is a Date/,
    );
    await app.close();
    break;
  }
  case "./storage": {
    const { bootstrap } = await import("@thaw/thaw");
    const { storage, ObjectStorage } = await import("@thaw/thaw/storage");
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const folder = await mkdtemp(tmpdir() + "/thaw-npm-storage-");
    const app = await bootstrap({
      config: { storage: [{ name: "files", url: "file:" + folder }] },
      storage: storage(),
    });
    const files = app.getBean(ObjectStorage);
    await files.put("a.txt", "hello");
    assert.equal((await files.head("a.txt"))?.size, 5);
    await app.close();
    break;
  }
  case "./kafka": {
    const { bootstrap } = await import("@thaw/thaw");
    const { kafka, KafkaTemplate } = await import("@thaw/thaw/kafka");
    assert.equal({} instanceof KafkaTemplate, false);
    // Its client is @platformatic/kafka, an optional peer dependency this install does not have.
    await assert.rejects(
      bootstrap({ config: { kafka: { "bootstrap-servers": "127.0.0.1:1" } }, kafka: kafka() }),
      /kafka.. needs the Kafka client: npm install @platformatic.kafka/,
    );
    break;
  }
  case "./broadcast": {
    const { Broadcaster } = await import("@thaw/thaw/broadcast");
    const broadcaster = new Broadcaster();
    const feed = broadcaster.subscribe("news");
    await broadcaster.publish("news", { n: 1 });
    assert.equal((await feed.next()).value?.data, '{"n":1}');
    await broadcaster.close();
    assert.equal((await feed.next()).done, true);
    break;
  }
  case "./security": {
    const { bootstrap } = await import("@thaw/thaw");
    const { security, SecurityContext } = await import("@thaw/thaw/security");
    const { Ping } = await import("./ping.js");
    // API keys need nothing else: the app runs without jose.
    const keyed = await bootstrap({
      controllers: [Ping],
      config: { security: { "api-keys": { keys: { batch: { key: "k-0123456789abcdef" } } } } },
      security: security(),
    });
    const ask = (key: string) =>
      keyed.fetch(new Request("http://localhost/ping", { headers: { "x-api-key": key } }));
    assert.equal((await ask("k-0123456789abcdef")).status, 200);
    assert.equal((await ask("k-0123456789abcdeX")).status, 401);
    await keyed.close();
    assert.equal(SecurityContext.current(), undefined);
    // Tokens need jose, an optional peer dependency this install does not have.
    await assert.rejects(
      bootstrap({
        controllers: [Ping],
        config: { security: { oauth2: { resourceserver: { jwt: { "jwk-set-uri": "http://127.0.0.1:1/jwks" } } } } },
        security: security(),
      }),
      /needs jose, which verifies the tokens: npm install jose/,
    );
    break;
  }
  case "./types": {
    // Types only: the declarations are there, and nothing at run time.
    const types: typeof import("@thaw/thaw/types") = await import("@thaw/thaw/types");
    assert.deepEqual(Object.keys(types), []);
    break;
  }
  case "./cli":
    // Imported, not run: the CLI acts only as the main module.
    await import("@thaw/thaw/cli");
    break;
  default:
    throw new Error("no use written for entry " + entry);
}
console.log("ok " + entry);
`;

const CONSUMER = `import {
  Autowired,
  bootstrap,
  GetMapping,
  HttpStatus,
  PathVariable,
  PostMapping,
  RequestBody,
  RequestMapping,
  ResponseEntity,
  RestController,
  Service,
} from "@thaw/thaw";

@Service()
class Names {
  readonly #names = new Map<number, string>([[1, "Ada"]]);
  get(id: number): string | undefined {
    return this.#names.get(id);
  }
}

@RestController()
@RequestMapping("/names")
class NameController {
  @Autowired(Names)
  private names!: Names;

  @GetMapping("/{id}", PathVariable("id", Number))
  get(id: number): ResponseEntity {
    const name = this.names.get(id);
    return name === undefined
      ? ResponseEntity.status(HttpStatus.NOT_FOUND).withJson({ error: "no such name" })
      : ResponseEntity.ok({ id, name });
  }

  @PostMapping("/echo", RequestBody())
  echo(body: unknown): unknown {
    return body;
  }
}

const app = await bootstrap({ controllers: [NameController], components: [Names] });
const answers = [];
for (const [method, path, body] of [
  ["GET", "/names/1"],
  ["GET", "/names/2"],
  ["GET", "/names/x"],
  ["POST", "/names/echo", '{"a":[1]}'],
]) {
  const res = await app.fetch(
    new Request("http://localhost" + path, {
      method,
      body,
      headers: body ? { "content-type": "application/json" } : {},
    }),
  );
  answers.push([res.status, await res.json()]);
}
console.log(JSON.stringify(answers));
`;

// A Node program that runs migrations from code: `node migrate_app.js <dir>` with `<dir>/config`
// and `<dir>/files`; prints what happened as JSON.
const MIGRATE_CONSUMER = `import { join } from "node:path";
import { migrate, MigrationRunError, type RunReport, summaryLines } from "@thaw/thaw/migrate";

const dir = process.argv[2];
try {
  const report: RunReport = await migrate({
    config: join(dir, "config"),
    migrations: join(dir, "files"),
    cwd: dir,
  });
  const summary = summaryLines(report)[0].replace(/, \\d+ request.*/, "");
  console.log(JSON.stringify({ applied: report.connections[0].applied, summary }));
} catch (error) {
  if (!(error instanceof MigrationRunError)) throw error;
  const { kind, file, exitCode, message } = error;
  console.log(JSON.stringify({ kind, file, exitCode, message }));
}
`;

/** The tsconfig.json of a strict consumer that checks library declarations too (no skipLibCheck). */
function strictConsumer(file: string, lib: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      lib,
      types: ["node"],
    },
    files: [file],
  });
}

describe("npm package on Node (no loader)", () => {
  const suiteDir = suiteTempDirs();
  let project = "";
  let tarball = "";

  before(async () => {
    const build = await sh(process.execPath, ["--import", "tsx", "tools/build_npm.ts"], root);
    assert.equal(build.code, 0, `build failed: ${build.stderr}`);
    tarball = build.stdout.trim();
    project = await suiteDir("thaw-npm-");
    const types = JSON.parse(await readFile(join(root, "package.json"), "utf8"))
      .devDependencies["@types/node"];
    await writeFile(
      join(project, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
        dependencies: { "@thaw/thaw": `file:${tarball}` },
        devDependencies: { "@types/node": types },
      }),
    );
    // Everything the package needs is in npm's cache since the repository's own install.
    const install = await sh(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund"],
      project,
    );
    assert.equal(install.code, 0, `npm install failed: ${install.stderr}`);
  });

  it("type-checks against the package's .d.ts files and serves a decorated controller", async () => {
    await writeFile(join(project, "app.ts"), CONSUMER);
    // A strict consumer that checks library declarations too (no skipLibCheck).
    await writeFile(
      join(project, "tsconfig.json"),
      strictConsumer("app.ts", ["es2023", "dom", "esnext.decorators"]),
    );
    const tsc = await sh(join(root, "node_modules", ".bin", "tsc"), ["-p", "."], project);
    assert.equal(tsc.code, 0, `tsc: ${tsc.stdout}${tsc.stderr}`);
    const run = await sh(process.execPath, ["app.js"], project);
    assert.equal(run.code, 0, run.stderr);
    const [found, missing, invalid, echoed] = JSON.parse(run.stdout);
    assert.deepEqual(found, [200, { id: 1, name: "Ada" }]);
    assert.deepEqual(missing, [404, { error: "no such name" }]);
    assert.equal(invalid[0], 400);
    assert.match(JSON.stringify(invalid[1]), /Path variable 'id' must be an integer/);
    assert.deepEqual(echoed, [200, { a: [1] }]);
  });

  it("compiles the testing guide's files, which import each other as .ts, with the README's tsconfig", async () => {
    const readme = await readFile(join(root, "README.md"), "utf8");
    const tsconfig = /^ {2}```json\n([\s\S]*?)^ {2}```/m.exec(readme)?.[1];
    assert.ok(tsconfig !== undefined, "the README shows a tsconfig.json");
    const guide = await readFile(join(root, "docs", "testing.md"), "utf8");
    const file = (name: string) => {
      const at = guide.indexOf(`// tests/${name}\n`);
      assert.ok(at !== -1, `docs/testing.md shows tests/${name}`);
      return guide.slice(at, guide.indexOf("```", at));
    };
    const dir = join(project, "guide");
    await mkdir(join(dir, "tests"), { recursive: true });
    await writeFile(join(dir, "tsconfig.json"), tsconfig.replace(/^ {2}/gm, ""));
    for (const name of ["create_app.ts", "health_test.ts"]) {
      await writeFile(join(dir, "tests", name), file(name));
    }
    const tsc = await sh(join(root, "node_modules", ".bin", "tsc"), ["-p", "guide"], project);
    assert.equal(tsc.code, 0, `tsc: ${tsc.stdout}${tsc.stderr}`);
    const run = await sh(
      process.execPath,
      ["--test", join("guide", "tests", "health_test.js")],
      project,
    );
    assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);
  });

  it("each entry point of the installed package works imported alone, type-checked against its .d.ts", async () => {
    await mkdir(join(project, "entries"), { recursive: true });
    await writeFile(join(project, "entries", "ping.ts"), ENTRY_PING);
    await writeFile(join(project, "entries", "main.ts"), ENTRY_ALONE);
    await writeFile(
      join(project, "entries", "tsconfig.json"),
      strictConsumer("main.ts", ["es2023", "dom", "esnext.decorators"]).replace(
        '"files":["main.ts"]',
        '"files":["main.ts","ping.ts"]',
      ),
    );
    const tsc = await sh(
      join(root, "node_modules", ".bin", "tsc"),
      ["-p", "entries"],
      project,
    );
    assert.equal(tsc.code, 0, `tsc: ${tsc.stdout}${tsc.stderr}`);
    const { exports } = JSON.parse(
      await readFile(join(project, "node_modules", "@thaw", "thaw", "package.json"), "utf8"),
    ) as { exports: Record<string, unknown> };
    // The package's entry points are JSR's, each of them.
    const deno = JSON.parse(await readFile(join(root, "deno.json"), "utf8")) as {
      exports: Record<string, string>;
    };
    assert.deepEqual(Object.keys(exports).sort(), Object.keys(deno.exports).sort());
    for (const name of Object.keys(exports)) {
      // A process per entry point: nothing of the package is loaded before it.
      await using dir = await tempDir("thaw-npm-entry-");
      const run = await sh(process.execPath, [join("entries", "main.js"), name, dir.path], project);
      assert.equal(run.code, 0, `${name}: ${run.stderr}`);
      const lines = run.stdout.trim().split("\n");
      assert.equal(lines.at(-1), `ok ${name}`);
      // The server entry's listen() says where it listens, first; the others print nothing else.
      if (name === "./server") {
        assert.match(
          lines[0],
          /^Thaw listening on http:\/\/127\.0\.0\.1:\d+ — 1 controller, 1 route, started in \d+ ms$/,
        );
      } else assert.equal(lines.length, 1, run.stdout);
    }
  });

  it("runs the migration CLI as `npx thaw`", async () => {
    const help = await sh("npx", ["--no-install", "thaw", "--help"], project);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: .*-c <config_dir> --migrations <migrations_root>/);
    const config = join(project, "config");
    const files = join(project, "migrations");
    await mkdir(join(files, "app"), { recursive: true });
    await mkdir(config, { recursive: true });
    await writeFile(
      join(config, "application.yml"),
      "datasource:\n  - name: app\n    url: sqlite:./data/app.db\n    migrations: { enabled: true }\n",
    );
    await writeFile(join(files, "app", "001-notes.sql"), "CREATE TABLE notes (body TEXT);\n");
    const migrate = await sh(
      "npx",
      ["--no-install", "thaw", "-c", config, "--sqlPath", files],
      project,
    );
    if (SQLITE === undefined) {
      assert.equal(migrate.code, 1);
      assert.match(migrate.stderr, /SQLite needs a runtime with node:sqlite/);
      return;
    }
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.match(migrate.stdout, /app: 1 applied, 0 unchanged/);
    const again = await sh(
      "npx",
      ["--no-install", "thaw", "-c", config, "--sqlPath", files],
      project,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /app: 0 applied, 1 unchanged/);
  });

  it("says how to run `npx thaw manifest` on TypeScript sources, and that command works", async () => {
    // A project of its own: tsx goes into it.
    await using own = await tempDir("thaw-npm-manifest-");
    await writeFile(
      join(own.path, "package.json"),
      JSON.stringify({
        name: "manifest-consumer",
        private: true,
        type: "module",
        dependencies: { "@thaw/thaw": `file:${tarball}` },
      }),
    );
    const install = await sh(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund"],
      own.path,
    );
    assert.equal(install.code, 0, install.stderr);
    await mkdir(join(own.path, "src"));
    await writeFile(join(own.path, "src", "ping.ts"), ENTRY_PING);
    const failed = await sh("npx", ["--no-install", "thaw", "manifest", "src"], own.path);
    assert.equal(failed.code, 2, failed.stdout + failed.stderr);
    assert.match(failed.stderr, /Component scan could not import .*ping\.ts: /);
    assert.match(failed.stderr, /\n {2}npm install --save-dev tsx\n/);
    const suggested = /^ {2}node --import tsx (\S+) manifest src$/m.exec(failed.stderr);
    assert.ok(suggested, failed.stderr);
    assert.equal(suggested[1], join("node_modules", "@thaw", "thaw", "cli.js"));

    const tsx = await sh(
      "npm",
      ["install", "--save-dev", "tsx", "--prefer-offline", "--no-audit", "--no-fund"],
      own.path,
    );
    assert.equal(tsx.code, 0, tsx.stderr);
    const run = await sh(
      process.execPath,
      ["--import", "tsx", suggested[1], "manifest", "src"],
      own.path,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /import \{ Ping \} from "\.\/src\/ping\.ts";/);
  });

  it("runs migrations from code through @thaw/thaw/migrate, type-checked against its .d.ts", async () => {
    const dir = await mkdtemp(join(project, "api-"));
    await mkdir(join(dir, "config"));
    await mkdir(join(dir, "files", "app"), { recursive: true });
    await writeFile(
      join(dir, "config", "application.yml"),
      "datasource:\n  - name: app\n    url: sqlite:./data/app.db\n    migrations: { enabled: true }\n",
    );
    await writeFile(
      join(dir, "files", "app", "001-notes.sql"),
      "CREATE TABLE notes (body TEXT);\n",
    );
    await writeFile(join(project, "migrate_app.ts"), MIGRATE_CONSUMER);
    await writeFile(
      join(project, "tsconfig.migrate.json"),
      strictConsumer("migrate_app.ts", ["es2023", "dom"]),
    );
    const tsc = await sh(
      join(root, "node_modules", ".bin", "tsc"),
      ["-p", "tsconfig.migrate.json"],
      project,
    );
    assert.equal(tsc.code, 0, `tsc: ${tsc.stdout}${tsc.stderr}`);
    const run = async () => {
      const result = await sh(process.execPath, [join(project, "migrate_app.js"), dir], project);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout);
    };
    if (SQLITE === undefined) {
      const refused = await run();
      assert.equal(refused.kind, "failure");
      assert.match(refused.message, /SQLite needs a runtime with node:sqlite/);
      return;
    }
    assert.deepEqual(await run(), { applied: 1, summary: "app: 1 applied, 0 unchanged" });
    assert.deepEqual(await run(), { applied: 0, summary: "app: 0 applied, 1 unchanged" });
    await writeFile(join(dir, "files", "app", "002-bad.sql"), "INSERT INTO nope VALUES (1);\n");
    const failed = await run();
    assert.equal(failed.kind, "failure");
    assert.equal(failed.file, "002-bad.sql");
    assert.equal(failed.exitCode, 1);
    assert.match(failed.message, /file 002-bad\.sql:1: .*no such table: nope/);
  });

  it("installs no database driver, no undici, no redis and no ws: they are optional peer dependencies", async () => {
    const installed = JSON.parse(
      await readFile(join(project, "node_modules", "@thaw", "thaw", "package.json"), "utf8"),
    );
    for (const name of DRIVERS) {
      assert.equal(installed.dependencies?.[name], undefined, `${name} is a dependency`);
      assert.ok(installed.peerDependencies?.[name], `${name} is not a peer dependency`);
      assert.equal(installed.peerDependenciesMeta?.[name]?.optional, true, `${name} not optional`);
      await assert.rejects(
        access(join(project, "node_modules", name)),
        `${name} was installed by a web-only npm install`,
      );
    }
    // What SQLite and the search runner need comes with the package.
    for (const name of ["jsonc-parser", "dbgate-query-splitter"]) {
      await access(join(project, "node_modules", name));
    }
  });

  it("serves health without OpenTelemetry, and names its install line for prometheus", async () => {
    for (const name of ["@opentelemetry/api", "@opentelemetry/sdk-metrics"]) {
      await assert.rejects(
        access(join(project, "node_modules", name)),
        `${name} was installed by a web-only npm install`,
      );
    }
    await writeFile(
      join(project, "no_otel.mjs"),
      `import { bootstrap } from "@thaw/thaw";
import { actuator } from "@thaw/thaw/actuator";
const app = await bootstrap({ actuator: actuator() });
const health = await app.fetch(new Request("http://localhost/actuator/health"));
const exposing = { management: { endpoints: { web: { exposure: { include: "prometheus" } } } } };
const refused = await bootstrap({ actuator: actuator(), config: exposing }).then(
  () => null,
  (e) => [e.name, e.message],
);
console.log(JSON.stringify([health.status, refused]));
`,
    );
    const run = await sh(process.execPath, ["no_otel.mjs"], project);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [200, [
      "MissingPackageError",
      "management.endpoints.web.exposure.include: prometheus needs OpenTelemetry's API: " +
      "npm install @opentelemetry/api",
    ]]);
  });

  /** `npx thaw <args>` in the project, with `files` (path -> text) written into it first. */
  async function thaw(args: string[], files: Record<string, string>, where = project) {
    const dir = await mkdtemp(join(where, "run-"));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    return await sh(
      "npx",
      ["--no-install", "thaw", "-c", join(dir, "config"), "--sqlPath", join(dir, "files"), ...args],
      where,
    );
  }

  it("runs search migrations with `npx thaw -m search` on the real node, with no extra install", async () => {
    const id = `npm${crypto.randomUUID().slice(0, 8)}`;
    const files = {
      "config/application.yml": `search:\n  - name: main\n    hosts: [${OPENSEARCH_URL}]\n` +
        `    migrations: { enabled: true, index: fm_${id} }\n`,
      [`files/main/${id}-template.json`]: JSON.stringify({ index_patterns: [`${id}*`] }),
    };
    try {
      const run = await thaw(["-m", "search"], files);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /main: 1 applied, 0 unchanged/);
      assert.equal((await os("GET", `/_index_template/${id}`)).status, 200);
    } finally {
      // The node is shared and has a shard limit.
      await os("DELETE", `/fm_${id}`);
      await os("DELETE", `/_index_template/${id}`);
    }
  });

  it("asks for undici only for a search connection with a proxy: exit 2, nothing sent", async () => {
    const files = {
      "config/application.yml":
        `search:\n  - name: main\n    hosts: [${OPENSEARCH_URL}]\n    proxy: http://127.0.0.1:9\n` +
        `    migrations: { enabled: true }\n`,
      "files/main/a-template.json": JSON.stringify({ index_patterns: ["npm-proxy*"] }),
    };
    const line = /connection "main" \(a proxy on Node\) needs undici: npm install undici$/m;
    const run = await thaw(["-m", "search"], files);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, line);
    const json = await thaw(["-m", "search", "--json"], files);
    assert.equal(json.code, 2, json.stdout + json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.error.kind, "config");
    assert.equal(report.error.connection, "main");
    assert.match(report.error.message, line);
  });

  for (
    const [kind, url, install] of [
      ["postgres", "postgres://127.0.0.1:54329/thaw", "npm install pg pg-connection-string"],
      ["mysql", "mysql://127.0.0.1:33069/thaw", "npm install mysql2"],
    ]
  ) {
    it(`exits 2 with the install line for a ${kind} datasource without its driver`, async () => {
      const files = {
        "config/application.yml":
          `datasource:\n  - name: main\n    url: ${url}\n    migrations: { enabled: true }\n`,
        "files/main/001-notes.sql": "CREATE TABLE notes (body TEXT);\n",
      };
      const run = await thaw([], files);
      assert.equal(run.code, 2, run.stdout + run.stderr);
      const line = new RegExp(
        `application\\.yml:3: datasource\\[0\\]\\.url: datasource "main" \\(kind ${kind}\\) ` +
          `needs the \\w+ driver: ${install}$`,
        "m",
      );
      assert.match(run.stderr, line);
      const json = await thaw(["--json"], files);
      assert.equal(json.code, 2, json.stdout + json.stderr);
      const report = JSON.parse(json.stdout);
      assert.equal(report.error.kind, "config");
      assert.equal(report.error.connection, "main");
      assert.match(report.error.message, line);
    });
  }

  it("installs beside the oldest peers its ranges admit, and runs PostgreSQL, MariaDB and a search cluster behind a proxy with them", async () => {
    // An app that pinned older drivers must not get ERESOLVE, and what the ranges admit must work.
    const peers = JSON.parse(await readFile(join(root, "package.json"), "utf8"))
      .peerDependencies as Record<string, string>;
    const oldest = (name: string) => /^\^(\d+\.\d+\.\d+)/.exec(peers[name])![1];
    await using app = await tempDir("thaw-npm-old-");
    await writeFile(
      join(app.path, "package.json"),
      JSON.stringify({
        name: "old-drivers",
        private: true,
        type: "module",
        dependencies: {
          "@thaw/thaw": `file:${tarball}`,
          ...Object.fromEntries(
            ["pg", "pg-connection-string", "mysql2", "undici"].map((n) => [n, oldest(n)]),
          ),
        },
      }),
    );
    const install = await sh("npm", ["install", "--no-audit", "--no-fund"], app.path);
    assert.equal(install.code, 0, `npm install failed: ${install.stderr}`);
    const id = `old${crypto.randomUUID().slice(0, 8)}`;
    const sql = `CREATE TABLE ${id} (id INT);\nINSERT INTO ${id} VALUES (1);\n`;
    const files = {
      "config/application.yml": `datasource:\n` +
        [["my", MARIADB_URL], ["pg", POSTGRES_URL]].map(([name, url]) =>
          `  - name: ${name}\n    url: ${url}\n    username: ${DB_USER}\n` +
          `    password: \${THAW_TEST_DB_PASSWORD:${DB_PASSWORD}}\n` +
          `    migrations: { enabled: true, table: ${id}_records }\n`
        ).join(""),
      "files/pg/001-a.sql": sql,
      "files/my/001-a.sql": sql,
      // The failing statement is located through pg's per-statement hook.
      "files/pg/002-bad.sql": `SELECT 1;\nSELECT nope FROM ${id}_missing;\n`,
    };
    const run = await thaw([], files, app.path);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout + run.stderr, /002-bad\.sql:2/);
    // MariaDB runs first, then PostgreSQL applies one file and stops at the located failure.
    assert.match(run.stdout + run.stderr, /my: 1 applied/, run.stdout + run.stderr);
    assert.match(run.stdout + run.stderr, /pg: 1 applied/);

    const proxy = await startForwardProxy();
    try {
      const search = await thaw(["-m", "search"], {
        "config/application.yml": `search:\n  - name: main\n    hosts: [${OPENSEARCH_URL}]\n` +
          `    proxy: ${proxy.url}\n    migrations: { enabled: true, index: fm_${id} }\n`,
        [`files/main/${id}-template.json`]: JSON.stringify({ index_patterns: [`${id}*`] }),
      }, app.path);
      assert.equal(search.code, 0, search.stdout + search.stderr);
      assert.match(search.stdout, /main: 1 applied/);
      // undici tunnels every request through the proxy.
      assert.match(await proxy.log(), new RegExp(`CONNECT ${new URL(OPENSEARCH_URL).host}`));
    } finally {
      await proxy.stop();
      await os("DELETE", `/fm_${id}`);
      await os("DELETE", `/_index_template/${id}`);
    }
  });

  it("refuses a .ts migration on a Node that cannot import it, with the command, writing nothing; runs it as .js", async () => {
    await using app = await tempDir("thaw-npm-code-");
    const dev = JSON.parse(await readFile(join(root, "package.json"), "utf8"))
      .devDependencies as Record<string, string>;
    await writeFile(
      join(app.path, "package.json"),
      JSON.stringify({
        name: "code-migrations",
        private: true,
        type: "module",
        dependencies: {
          "@thaw/thaw": `file:${tarball}`,
          pg: dev.pg,
          "pg-connection-string": dev["pg-connection-string"],
        },
      }),
    );
    const install = await sh(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund"],
      app.path,
    );
    assert.equal(install.code, 0, `npm install failed: ${install.stderr}`);
    const db = await createDatabase("postgres", app.path, `npm${crypto.randomUUID().slice(0, 8)}`);
    try {
      const dir = await mkdtemp(join(app.path, "run-"));
      await mkdir(join(dir, "config"));
      await mkdir(join(dir, "files", "main"), { recursive: true });
      await writeFile(
        join(dir, "config", "application.yml"),
        `datasource:\n  - name: main\n    url: ${db.url}\n    username: ${DB_USER}\n` +
          `    password: \${THAW_TEST_DB_PASSWORD:${DB_PASSWORD}}\n    migrations: { enabled: true }\n`,
      );
      const code =
        'export default async (ctx) => {\n  await ctx.query("CREATE TABLE notes (b TEXT)");\n};\n';
      const run = () =>
        sh("npx", [
          "--no-install",
          "thaw",
          "-c",
          join(dir, "config"),
          "--sqlPath",
          join(dir, "files"),
        ], app.path);
      const tables = async () =>
        (await db.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
        )).map((r) => String(r.table_name));
      await writeFile(join(dir, "files", "main", "V1__x.ts"), code);
      const ts = await run();
      const [major, minor] = process.versions.node.split(".").map(Number);
      if ((process as { features?: { typescript?: unknown } }).features?.typescript) {
        assert.equal(ts.code, 0, ts.stdout + ts.stderr); // This Node strips types itself.
        return;
      }
      assert.equal(ts.code, 1, ts.stdout + ts.stderr);
      // The user's own command line, the script and the folders relative to where it ran.
      const rest =
        `${join("node_modules", ".bin", "thaw")} -c ${dir.slice(app.path.length + 1)}/config ` +
        `--sqlPath ${dir.slice(app.path.length + 1)}/files`;
      const expected = major < 22 || (major === 22 && minor < 6)
        ? `V1__x.ts: Node ${process.versions.node} cannot import TypeScript: run npx tsx ${rest}, ` +
          "or use Node 22.18 or later, or write it as V1__x.js"
        : `V1__x.ts: Node ${process.versions.node} strips TypeScript types only with a flag: ` +
          `run node --experimental-strip-types ${rest}`;
      assert.ok(ts.stderr.includes(expected), `${ts.stderr}\nexpected: ${expected}`);
      // Refused before anything is written: not even the records table is made.
      assert.deepEqual(await tables(), []);
      await rm(join(dir, "files", "main", "V1__x.ts"));
      await writeFile(join(dir, "files", "main", "V1__x.js"), code);
      const js = await run();
      assert.equal(js.code, 0, js.stdout + js.stderr);
      assert.match(js.stdout, /main: 1 applied, 0 unchanged/);
      assert.deepEqual(await tables(), ["framework_migrations", "notes"]);
      const recorded = await db.query("SELECT migration_path FROM framework_migrations");
      assert.deepEqual(recorded.map((r) => r.migration_path), ["V1__x.js"]);
    } finally {
      await db.close();
    }
  });
});
