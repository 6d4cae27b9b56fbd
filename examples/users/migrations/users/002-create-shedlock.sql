-- The locks of @SchedulerLock jobs (storage/sqlite_storage.ts's nightly upkeep), so that two
-- instances of the app on this file never run one job at once. The statement is the one
-- SqlLockProvider.createTable("sqlite") gives; times are UTC text, as the provider writes them.
CREATE TABLE shedlock (
  name TEXT NOT NULL PRIMARY KEY,
  lock_until TEXT NOT NULL,
  locked_at TEXT NOT NULL,
  locked_by TEXT NOT NULL
);
