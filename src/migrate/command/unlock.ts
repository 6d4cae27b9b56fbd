import { asFound, type MigrationCommand } from "./command.ts";

/**
 * `unlock`: removes a lock left by a runner that died, reading no file and no record. A lock
 * whose lease is still renewed is refused unless `--force`; on SQL there is never one to remove
 * (a SQL lock ends with its connection), which the report says.
 */
export const unlock: MigrationCommand = {
  name: "unlock",
  writes: false,
  drift: false,
  force: true,
  renames: true,
  verb: "record",
  listsUnknown: false,
  decide: asFound,
  isWork: () => false,
  alone: (target, force) => target.unlock(force),
};
