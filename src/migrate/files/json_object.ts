/** Whether a parsed JSON or YAML value is an object with keys (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
