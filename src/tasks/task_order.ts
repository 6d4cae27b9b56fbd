// Where the interceptors of `@thaw/thaw/tasks` sit in a method's chain, whatever order their
// decorators are written in (Spring's order): `@Async` outermost, so that the caller returns at
// once and everything else runs on the executor, in a transaction of the run's own; then
// `@Retryable`, so that each attempt waits for its slot and its lock anew and holds neither while
// it waits to try again; then `@ConcurrencyLimit` and `@Lockable`, around the transaction
// (order 0), so that it commits before the next run of the key starts. Method security
// (`@Secured`, `@PreAuthorize`: -500, in src/security/method_security.ts) runs outside them all:
// a call is checked where it is made, with its caller, before it is queued or retried.

/** Each interceptor's `thaw.order` (src/context/interceptors.ts): the lower runs further out. */
export const TASK_ORDER = {
  async: -400,
  retry: -300,
  concurrencyLimit: -200,
  lock: -100,
} as const;
