-- The locks of @SchedulerLock jobs (storage/sql_user_repository.ts's nightly upkeep), so that
-- two instances of the app on this database never run one job at once. The statement is the one
-- SqlLockProvider.createTable("postgres") gives.
CREATE TABLE shedlock (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  lock_until TIMESTAMP(3) WITH TIME ZONE NOT NULL,
  locked_at TIMESTAMP(3) WITH TIME ZONE NOT NULL,
  locked_by VARCHAR(255) NOT NULL
);
