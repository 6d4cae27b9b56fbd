import canonicalize from "canonicalize";

const CR = 0x0d;
const LF = 0x0a;

/**
 * The SHA-256 of raw bytes, in lowercase hex: a record's id, and the checksum records written
 * before checksums were taken of content hold for a whole file (still matching, it is unchanged).
 */
export async function rawContentHash(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/**
 * The checksum of a parsed JSON migration file: the SHA-256 of its RFC 8785 canonical form, so
 * whitespace, line endings, a BOM and the order of keys are not changes, and any change of a value
 * is. The value must be what `JSON.parse` returns: finite numbers, well-formed strings (the
 * planner refuses the rest, before hashing).
 */
export function jsonContentHash(value: unknown): Promise<string> {
  return rawContentHash(new TextEncoder().encode(canonicalize(value)));
}

/**
 * The checksum of a SQL migration file: the SHA-256 of its bytes with CRLF and lone CR line
 * endings read as LF. Everything else counts: SQL has no canonical form, and a space inside a
 * string literal is a change. A file with LF endings hashes as its raw bytes did before.
 */
export function sqlContentHash(bytes: Uint8Array): Promise<string> {
  if (!bytes.includes(CR)) return rawContentHash(bytes);
  // CR and LF never occur inside a multi-byte UTF-8 sequence: bytes can be rewritten directly.
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== CR) out[n++] = bytes[i];
    else {
      out[n++] = LF;
      if (bytes[i + 1] === LF) i++;
    }
  }
  return rawContentHash(out.subarray(0, n));
}
