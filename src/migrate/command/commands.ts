import { baseline } from "./baseline.ts";
import type { Command, MigrationCommand } from "./command.ts";
import { migrate } from "./migrate.ts";
import { repair } from "./repair.ts";
import { status } from "./status.ts";
import { undo } from "./undo.ts";
import { unlock } from "./unlock.ts";
import { validate } from "./validate.ts";

/** Every command, by name, in the order the usage lists them. */
export const COMMANDS: Readonly<Record<Command, MigrationCommand>> = {
  migrate,
  undo,
  status,
  validate,
  baseline,
  repair,
  unlock,
};

/** Whether `name` is a command. */
export function isCommand(name: string): name is Command {
  return Object.hasOwn(COMMANDS, name);
}
