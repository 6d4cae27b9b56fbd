/** Whether a `Content-Type` value is JSON: `application/json` or any `+json` type. */
export function isJsonMediaType(type: string): boolean {
  if (type === "application/json") return true;
  const essence = type.split(";", 1)[0].trim().toLowerCase();
  return essence === "application/json" ||
    (essence.startsWith("application/") && essence.endsWith("+json"));
}

/**
 * Why a JSON body cannot be read as it was sent, or `undefined`: a `charset` other than UTF-8
 * (RFC 8259 has JSON in UTF-8, and a body in another charset would be read wrong, or refused as
 * "not valid UTF-8" without saying why), or a `Content-Encoding` other than `identity` (the bytes
 * are compressed, and Thaw does not inflate request bodies, whose size after inflating no limit
 * declared up front would bound). The reason quotes at most 64 characters of the client's text.
 */
export function unsupportedJsonEncoding(
  contentType: string,
  contentEncoding: string | null,
): string | undefined {
  if (contentEncoding !== null) {
    const coding = contentEncoding.trim().toLowerCase();
    if (coding !== "" && coding !== "identity") {
      return `Content-Encoding ${quoted(contentEncoding)} is not supported; send the body as it is`;
    }
  }
  if (contentType === "application/json") return undefined;
  for (const parameter of contentType.split(";").slice(1)) {
    const equals = parameter.indexOf("=");
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    const charset = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1");
    const name = charset.toLowerCase();
    if (name !== "utf-8" && name !== "utf8") {
      return `charset ${quoted(charset)} is not supported; JSON bodies are read as UTF-8`;
    }
  }
  return undefined;
}

function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
