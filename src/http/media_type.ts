/** Whether a `Content-Type` value is JSON: `application/json` or any `+json` type. */
export function isJsonMediaType(type: string): boolean {
  if (type === "application/json") return true;
  const essence = type.split(";", 1)[0].trim().toLowerCase();
  return essence === "application/json" ||
    (essence.startsWith("application/") && essence.endsWith("+json"));
}

/**
 * Whether a header value is one value, not a list: no comma outside a quoted string, and no quote
 * left open (`application/json; p="a,b"` is one; `application/json, text/plain` is two fields
 * joined, and so is `application/json; a=", text/html`).
 */
export function isSingleValue(value: string): boolean {
  if (!value.includes(",")) return true;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) return false;
  }
  return !quoted; // an unclosed quote hides whatever follows it
}
