// The sample users app: `npm start` (or `deno task users`) from the repository root. Its bootstrap
// brings the `users` datasource of application.yml up to date from the migrations first (SQLite by
// default; PostgreSQL with THAW_PROFILES_ACTIVE=postgres), then it serves on server.port until
// SIGTERM or Ctrl-C, which listen() turns into a graceful shutdown: the requests in flight
// finish, app.close() closes the database's pool after the beans that use it, and the process
// exits 0.
import process from "node:process";
import { type Application, bootstrap } from "../../mod.ts";
import { ConfigError, loadConfig } from "../../config.ts";
import { actuator } from "../../actuator.ts";
import { data } from "../../data.ts";
import { openApi } from "../../openapi.ts";
import { scanComponents } from "../../scan.ts";
import { security } from "../../security.ts";
import { listen } from "../../server.ts";
import { MigrationRunError } from "../../migrate.ts";
import { SqlLocks } from "./storage/sql_locks.ts";
import { SqlUserRepository } from "./storage/sql_user_repository.ts";
import { usersMigrations } from "./storage/users_migrations.ts";

const here = new URL(".", import.meta.url);

let app: Application;
try {
  const config = await loadConfig(new URL("application.yml", here));
  app = await bootstrap({
    config,
    // The `users` datasource as a SqlClient bean, migrated before any bean is made from
    // migrations/users/ (or migrations-postgres/users/ on PostgreSQL).
    data: data({ migrate: usersMigrations(config), onProgress: (line) => console.log(line) }),
    // app.component-scan of application.yml: src/. The storage, and its scheduler locks, are
    // kept out of it: the workers, which scan it too, keep their users in memory.
    components: [...await scanComponents(config), SqlUserRepository, SqlLocks],
    // app.openapi of application.yml says where (and whether: OPENAPI=false turns it off).
    openapi: openApi(),
    // /actuator/health (with data's `db` component) and its probes, as management.* exposes them.
    actuator: actuator(),
    // Every route needs a bearer token unless opened: the keys, audience and open paths are
    // security.* of application.yml and of its profile (dev: the dev key of `npm run token`).
    security: security(),
  });
} catch (error) {
  // A failed migration (its file, line and the database's reason), a configuration refused (a
  // variable it needs unset) or a datasource refused (a :memory: database, which the migrations
  // would reach and the app would not): one line, no stack trace, and the runner's exit code.
  if (error instanceof MigrationRunError) {
    console.error(`users app not started: ${error.message}`);
    process.exit(error.exitCode);
  }
  if (error instanceof ConfigError) {
    console.error(`users app not started: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
// Prints the start line: where it listens, what it serves, how long it took to start.
await listen(app);
// The pid is where SIGTERM goes: under `npm start` it is not npm's, which does not pass it on.
console.log(`users app: pid ${process.pid}`);
