import { Autowired, Bean, Configuration } from "../../../mod.ts";
import type { SqlClient } from "../../../data.ts";
import { type LockManager, SqlLockManager } from "../../../tasks.ts";

/**
 * The locks of the app's `@SchedulerLock` jobs, in the `shedlock` table its migrations make
 * (`002-create-shedlock.sql`), through the `users` datasource's pool: no connection of their own.
 * Registered by main.ts beside the SQL repository.
 */
@Configuration()
export class SqlLocks {
  @Autowired("users")
  private sql!: SqlClient;

  @Bean("lockManager")
  lockManager(): LockManager {
    return new SqlLockManager(this.sql);
  }
}
