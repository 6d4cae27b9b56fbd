/**
 * Component scanning: `scanComponents(directories)` imports every module under them and returns
 * the exported bean classes, for `bootstrap({ components })`; `scanComponents(config)` scans the
 * `app.component-scan` directories of a loaded `application.yml`. Apart from the default entry
 * point because it needs a file system; an edge worker lists its classes, or imports the manifest
 * `deno run -A jsr:@thaw/thaw/cli manifest` writes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { scanComponents } from "@thaw/thaw/scan";
 *
 * // A directory with no modules holds no beans.
 * const dir = await mkdtemp(join(tmpdir(), "thaw-"));
 * assert.deepEqual(await scanComponents([dir]), []);
 * ```
 *
 * @module
 */
export { scanComponents } from "./src/context/component_scan.ts";
