/** Whether a `Content-Type` value is JSON: `application/json` or any `+json` type. */
export function isJsonMediaType(type: string): boolean {
  if (type === "application/json") return true;
  const essence = type.split(";", 1)[0].trim().toLowerCase();
  return essence === "application/json" ||
    (essence.startsWith("application/") && essence.endsWith("+json"));
}
