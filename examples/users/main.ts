// The sample users app: `npm start` (or `deno task users`) from the repository root. It brings its
// SQLite database up to date from migrations/ first, then serves on server.port of application.yml
// until SIGTERM or Ctrl-C, which listen() turns into a graceful shutdown: the requests in
// flight finish, app.close() closes the database (its @PreDestroy), and the process exits 0.
import process from "node:process";
import { bootstrap } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { actuator } from "../../actuator.ts";
import { openApi } from "../../openapi.ts";
import { scanComponents } from "../../scan.ts";
import { listen } from "../../server.ts";
import { migrate, MigrationRunError, readDatasource, summaryLines } from "../../migrate.ts";
import { sqliteStorage } from "./storage/sqlite_storage.ts";

const here = new URL(".", import.meta.url);

try {
  // SQL mode, the datasources of application.yml, the files of migrations/<datasource>/.
  const report = await migrate({
    config: here,
    migrations: new URL("migrations/", here),
    onProgress: (line) => console.log(line),
  });
  for (const line of summaryLines(report)) console.log(line);
} catch (error) {
  if (!(error instanceof MigrationRunError)) throw error;
  // The file and the database's reason (or why nothing ran); no stack trace, the run is reported.
  console.error(`users app not started: ${error.message}`);
  process.exit(error.exitCode);
}

// The file the migrations went to, read from application.yml the same way.
const users = await readDatasource({ config: here, name: "users" });
if (users.location === ":memory:") {
  // Each connection to :memory: is a database of its own: the app's would have no table.
  console.error(
    "users app not started: USERS_DB=:memory: gives the migrations and the app two different " +
      "in-memory databases; give a file",
  );
  process.exit(2);
}
const config = await loadConfig(new URL("application.yml", here));
const app = await bootstrap({
  config,
  // app.component-scan of application.yml: src/.
  components: [...await scanComponents(config), sqliteStorage(users.location)],
  // app.openapi of application.yml says where (and whether: OPENAPI=false turns it off).
  openapi: openApi(),
  // /actuator/health and its probes, as management.* of application.yml exposes them.
  actuator: actuator(),
});
// Prints the start line: where it listens, what it serves, how long it took to start.
await listen(app);
// The pid is where SIGTERM goes: under `npm start` it is not npm's, which does not pass it on.
console.log(`users app: pid ${process.pid}`);
