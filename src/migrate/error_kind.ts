/**
 * Why a run did not succeed. The kind decides the exit code: `usage` and `config` 2 (nothing was
 * sent); `plan` (a file cannot be planned; nothing was sent), `failure` (a migration or the
 * connection failed), `invalid` (`validate` found applied files changed) and `interrupted`
 * (Ctrl-C) 1; `lock` (another runner held the lock past `--lock-timeout`) 3.
 */
export type ErrorKind =
  | "usage"
  | "config"
  | "plan"
  | "failure"
  | "lock"
  | "invalid"
  | "interrupted";
