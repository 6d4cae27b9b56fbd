/** A parsed JSON object: what a migration file, a cluster's answer or a record holds. */
export type JsonObject = Record<string, unknown>;

/** Whether a parsed JSON or YAML value is an object with keys (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
