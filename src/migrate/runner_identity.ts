/** Who runs: shown to runners waiting for the lock; SQL records `user@host` as `executed_by`. */
export interface RunnerIdentity {
  readonly host: string;
  readonly pid: number;
  readonly user?: string;
  /**
   * Whether process `pid` of this machine is gone. A search lock whose holder ran on this host
   * under a pid that is gone is taken over at once instead of after its lease. Absent: never
   * assumed.
   */
  readonly processGone?: (pid: number) => boolean;
}
