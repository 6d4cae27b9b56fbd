/**
 * The configuration is wrong: a YAML syntax error, a missing variable, a value of the wrong kind.
 * The message names the file, and the key or the line and column.
 *
 * @example
 * ```ts
 * import { ConfigError } from "@thaw/thaw";
 * const e = new ConfigError("application.yml: server.port must be an integer from 0 to 65535");
 * e.name; // "ConfigError"
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
