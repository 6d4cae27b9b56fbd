/**
 * The configuration is wrong: a YAML syntax error, a missing variable, a value of the wrong kind.
 * The message names the file, and the key or the line and column.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, ConfigError } from "@thaw/thaw";
 *
 * await assert.rejects(bootstrap({ config: { server: { port: 70000 } } }), (e) => {
 *   assert.ok(e instanceof ConfigError);
 *   assert.equal(e.message, "config: server.port must be an integer from 0 to 65535, got 70000");
 *   return true;
 * });
 * ```
 */
export class ConfigError extends Error {
  /**
   * Creates the error.
   *
   * @param message what is wrong, and where
   * @param options the standard `cause`
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
