/** How often a runner waiting for a lock (search, PostgreSQL, MySQL) looks at it again. */
export const LOCK_POLL_MS = 250;
