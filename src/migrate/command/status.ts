import { asFound, type MigrationCommand } from "./command.ts";

/**
 * `status`: each file as applied, pending, changed, missing, renamed or out of order, and with
 * `--drift` each resource compared with the live system. Sends only reads; writes nothing, so no
 * file state is work. Fails only when the records cannot be read (the files are then listed as
 * `unknown`).
 */
export const status: MigrationCommand = {
  name: "status",
  writes: false,
  drift: true,
  force: false,
  renames: true,
  verb: "record",
  listsUnknown: true,
  decide: asFound,
  isWork: () => false,
};
