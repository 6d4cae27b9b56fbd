// The sample users app's PostgreSQL databases, for the tests: each a fresh database of the server
// `tools/databases.sh start` runs (a test fails, saying how to start it, when it is not running).
import { createDatabase, DB_PASSWORD, DB_USER } from "../migrate/sql/databases.ts";

/**
 * The `postgres` profile (and `dev`'s key) of the users app on a new database of the test server: a
 * `FreshDatabase` of users_storage.ts that needs no folder, the server keeping the database.
 */
export const freshPostgres: () => Promise<Record<string, string>> = async () => {
  const id = `u${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  // The folder is SQLite's: the server keeps the database.
  const db = await createDatabase("postgres", "", id);
  await db.close();
  return {
    THAW_PROFILES_ACTIVE: "dev,postgres",
    USERS_DB_URL: db.url,
    USERS_DB_USER: DB_USER,
    USERS_DB_PASSWORD: DB_PASSWORD,
  };
};
