import type { LoadedConfig } from "../../../config.ts";

/**
 * The migrations root of the `users` datasource's database, as `data({ migrate })` takes it: the
 * DDL differs (SQLite's `AUTOINCREMENT`, PostgreSQL's identity column), so each database has a
 * folder of its own, as Flyway's `db/migration/{vendor}`: `migrations/` for SQLite (the default of
 * application.yml), `migrations-postgres/` for PostgreSQL (the `postgres` profile).
 */
export function usersMigrations(config: LoadedConfig): URL {
  const list = config.values.datasource;
  const users = Array.isArray(list)
    ? list.find((entry) => (entry as { name?: unknown } | null)?.name === "users")
    : undefined;
  const url = String((users as { url?: unknown } | undefined)?.url ?? "");
  if (url.startsWith("sqlite:")) return new URL("../migrations/", import.meta.url);
  if (/^postgres(ql)?:/.test(url)) return new URL("../migrations-postgres/", import.meta.url);
  throw new Error(
    `${config.source}: datasource "users" must be SQLite or PostgreSQL ` +
      `(the sample app has migrations for those), got url ${JSON.stringify(url.split(":")[0])}`,
  );
}
