/** The type and subtype of a `Content-Type` value, lower-case: `multipart/form-data`. */
export function mediaTypeEssence(type: string): string {
  return type.split(";", 1)[0].trim().toLowerCase();
}

/**
 * The value of a `Content-Type` parameter (`boundary`, `charset`): the first of that name, a
 * quoted string unquoted; `undefined` when there is none. Names are compared case-insensitively.
 */
export function mediaTypeParameter(type: string, name: string): string | undefined {
  const wanted = name.toLowerCase();
  return parameters(type).find(([key]) => key === wanted)?.[1];
}

/** Whether a `Content-Type` value is JSON: `application/json` or any `+json` type. */
export function isJsonMediaType(type: string): boolean {
  if (type === "application/json") return true;
  const essence = mediaTypeEssence(type);
  return essence === "application/json" ||
    (essence.startsWith("application/") && essence.endsWith("+json"));
}

/**
 * Why a JSON body cannot be read as it was sent, or `undefined`: a `charset` other than UTF-8
 * (RFC 8259 has JSON in UTF-8, and a body in another charset would be read wrong, or refused as
 * "not valid UTF-8" without saying why), or a `Content-Encoding` other than `identity` (the bytes
 * are compressed, and Thaw does not inflate request bodies, whose size after inflating no limit
 * declared up front would bound). Any label of UTF-8 is UTF-8 (`utf8`, `unicode-1-1-utf-8`), as
 * the Encoding standard lists them. The reason quotes at most 64 characters of the client's text.
 */
export function unsupportedJsonEncoding(
  contentType: string,
  contentEncoding: string | null,
): string | undefined {
  const coding = unsupportedContentEncoding(contentEncoding);
  if (coding !== undefined) return coding;
  if (contentType === "application/json") return undefined;
  return unsupportedCharset(contentType, "JSON bodies");
}

/**
 * Why a body sent with this `Content-Encoding` cannot be read, or `undefined` for none or
 * `identity`: Thaw does not inflate request bodies (see {@linkcode unsupportedJsonEncoding}).
 */
export function unsupportedContentEncoding(contentEncoding: string | null): string | undefined {
  if (contentEncoding === null) return undefined;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === "" || coding === "identity") return undefined;
  return `Content-Encoding ${quoted(contentEncoding)} is not supported; send the body as it is`;
}

/**
 * Why a body of this `Content-Type` cannot be read as UTF-8, or `undefined`: its `charset` names
 * another encoding. `what` names the bodies in the reason (`form bodies`).
 */
export function unsupportedCharset(contentType: string, what: string): string | undefined {
  for (const [name, value] of parameters(contentType)) {
    if (name === "charset" && !isUtf8Label(value)) {
      return `charset ${quoted(value)} is not supported; ${what} are read as UTF-8`;
    }
  }
  return undefined;
}

// The parameters of a media type (RFC 9110, 5.6.6): `;`-separated `name=value`, a value a token or
// a quoted string with `\` escapes, in which a `;` is no separator. Names are lower-cased.
function parameters(type: string): [string, string][] {
  const found: [string, string][] = [];
  let i = type.indexOf(";");
  let equals = -1;
  while (i !== -1) {
    // The first `=` after this `;`, looked for again only once passed: a run of `;` with no `=`
    // (`a;;;;`, from any client's header) costs one pass over it, not one per `;`.
    if (equals <= i) {
      equals = type.indexOf("=", i + 1);
      if (equals === -1) break;
    }
    const next = type.indexOf(";", i + 1);
    if (next !== -1 && next < equals) {
      i = next;
      continue;
    }
    const name = type.slice(i + 1, equals).trim().toLowerCase();
    let j = equals + 1;
    while (type[j] === " " || type[j] === "\t") j++;
    if (type[j] === '"') {
      let value = "";
      for (j++; j < type.length && type[j] !== '"'; j++) {
        if (type[j] === "\\") j++;
        value += type[j] ?? "";
      }
      found.push([name, value]);
      i = type.indexOf(";", j);
    } else {
      const end = type.indexOf(";", j);
      found.push([name, type.slice(j, end === -1 ? undefined : end).trim()]);
      i = end;
    }
  }
  return found;
}

function isUtf8Label(label: string): boolean {
  const lower = label.toLowerCase();
  if (lower === "utf-8" || lower === "utf8") return true;
  try {
    return new TextDecoder(label).encoding === "utf-8";
  } catch {
    return false; // a label the Encoding standard does not know
  }
}

function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
