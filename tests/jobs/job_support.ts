// What the job tests share: an app with `jobs()` on a fresh database of each kind (the jobs table
// made by Thaw's migration from a file of the app's migrations), and a wait on a state.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Application, bootstrap, type Class } from "../../mod.ts";
import { data } from "../../data.ts";
import { jobs } from "../../jobs.ts";
import { actuator } from "../../actuator.ts";
import type { Kind } from "../sql/pools.ts";
import type { DatasourceEntry } from "../sql/pools.ts";
import { memoryLogger } from "../helpers.ts";

const jobsEntry = new URL("../../jobs.ts", import.meta.url).href;

/** Makes a datasource entry on a fresh database of `kind`. */
export type Databases = (
  kind: Kind,
  name: string,
  extra?: Record<string, unknown>,
) => Promise<DatasourceEntry>;

/** An app with jobs, its logger's lines, and the database it keeps them in. */
export interface JobsApp {
  readonly app: Application;
  readonly lines: unknown[][];
  readonly entry: DatasourceEntry;
}

/**
 * An app of `components` with `jobs()` on a new database of `kind` (or `entry`'s, for a second
 * process of one app), the jobs table made at start unless `table` is false.
 */
export async function jobsApp(
  databases: Databases,
  kind: Kind,
  components: Class[],
  options: {
    readonly table?: boolean;
    readonly entry?: DatasourceEntry;
    readonly jobs?: Record<string, unknown>;
    /** Serve the actuator's health (with its details) and its jobs endpoint. */
    readonly health?: boolean;
  } = {},
): Promise<JobsApp> {
  const entry = options.entry ?? await databases(kind, "main", {
    migrations: { enabled: true },
  });
  const root = join(entry.dir, "migrations");
  await mkdir(join(root, "main"), { recursive: true });
  await writeFile(join(root, "main", "V1__sent.sql"), "CREATE TABLE sent (id VARCHAR(40));\n");
  if (options.table !== false) {
    await writeFile(
      join(root, "main", "V2__thaw_jobs.ts"),
      `import { jobsMigration } from ${JSON.stringify(jobsEntry)};\n` +
        "export default jobsMigration();\n",
    );
  }
  const logger = memoryLogger();
  const app = await bootstrap({
    config: {
      datasource: [entry.entry],
      server: { "shutdown-timeout": 10 },
      jobs: { "poll-interval": "50ms", ...options.jobs },
      ...(options.health ? { management: ACTUATOR_JOBS } : {}),
    },
    components,
    logger,
    data: data({ migrate: pathToFileURL(`${root}/`) }),
    jobs: jobs(),
    ...(options.health ? { actuator: actuator() } : {}),
  });
  return { app, lines: logger.lines, entry };
}

/** The actuator's settings that serve its health, with details, and its jobs endpoint. */
export const ACTUATOR_JOBS: Record<string, unknown> = {
  endpoints: { web: { exposure: { include: "health,jobs" } } },
  endpoint: { health: { "show-details": "always" } },
  health: { diskspace: { enabled: false } },
};

/** A call to `app`'s `/actuator/jobs<path>`: its status, and its JSON body unless 204. */
export function jobsEndpointCall(
  app: Application,
  // deno-lint-ignore no-explicit-any -- each test reads the JSON as the endpoint documents it
): (method: string, path: string) => Promise<{ status: number; body: any }> {
  return async (method, path) => {
    const response = await app.fetch(
      new Request(`http://x/actuator/jobs${path}`, {
        method,
        ...(method === "POST" ? { headers: { "content-type": "application/json" } } : {}),
      }),
    );
    return {
      status: response.status,
      body: response.status === 204 ? undefined : await response.json(),
    };
  };
}

/** Resolves once `check` does, looking again every few milliseconds; gives up after two minutes. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
