/** Configuration as parsed from `application.yml` (or given as an object). */
export type ConfigValues = Record<string, unknown>;
