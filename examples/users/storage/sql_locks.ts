import { Autowired, Bean, Configuration, type LockProvider } from "../../../mod.ts";
import type { SqlClient } from "../../../data.ts";
import { SqlLockProvider } from "../../../lock-sql.ts";

/**
 * The locks of the app's `@SchedulerLock` jobs, in the `shedlock` table its migrations make
 * (`002-create-shedlock.sql`), through the `users` datasource's pool: no connection of their own.
 * Registered by main.ts beside the SQL repository.
 */
@Configuration()
export class SqlLocks {
  @Autowired("users")
  private sql!: SqlClient;

  @Bean("lockProvider")
  lockProvider(): LockProvider {
    // SqlClient.unsafe binds the provider's own placeholders ($1 on PostgreSQL, ? on SQLite).
    return new SqlLockProvider({
      dialect: this.sql.kind,
      query: async (text, params) => (await this.sql.unsafe(text, params)).rows,
    });
  }
}
