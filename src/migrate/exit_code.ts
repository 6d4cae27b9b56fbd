/** The CLI's exit codes. */
export const ExitCode = {
  ok: 0,
  /** A migration failed (a request, or a file that cannot be planned). */
  failed: 1,
  /** The command line or the configuration is wrong: nothing was sent. */
  usage: 2,
  /** Another runner held the lock for longer than `--lock-timeout`. */
  locked: 3,
} as const;
