// Apart from callback_files.ts, so that driver.ts can import these types without an import cycle.
import type { CallbackEvent } from "./callback_name.ts";

/**
 * A callback file planned by the connection's driver (`F` is the driver's planned file), ready to
 * run at `event`. It is never recorded: it runs at every event, where a migration runs once.
 */
export interface PlannedCallback<F> {
  readonly event: CallbackEvent;
  /** The file's path under the connection's folder, as it is named in reports. */
  readonly path: string;
  readonly file: F;
}

/**
 * The callbacks that surround one applied file, in run order: `beforeEachMigrate` ones `before`
 * it, `afterEachMigrate` ones `after` it, inside the file's transaction where there is one.
 */
export interface EachFileCallbacks<F> {
  readonly before: readonly PlannedCallback<F>[];
  readonly after: readonly PlannedCallback<F>[];
}
