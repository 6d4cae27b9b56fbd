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
 * The checksum of a SQL migration file: the SHA-256 of its bytes with a leading UTF-8 BOM left out,
 * CRLF and lone CR line endings read as LF, and the line ends at its end left out, however many.
 * Flyway's checksum does not see these either (it hashes the lines, and a trailing empty line adds
 * nothing), and no SQL statement can end after the last line end. Everything else counts: SQL has
 * no canonical form, and a space inside a string literal is a change.
 */
export function sqlContentHash(bytes: Uint8Array): Promise<string> {
  const lf = withLfEndings(bytes);
  const start = hasBom(lf) ? BOM.length : 0;
  let end = lf.length;
  while (end > start && lf[end - 1] === LF) end--;
  return rawContentHash(lf.subarray(start, end));
}

/**
 * The checksums earlier versions wrote for a SQL file (the SHA-256 of its bytes with CRLF and CR
 * read as LF, BOM and final line end included), of it as it is and with a leading BOM or one final
 * line end added or removed. A record only holds the hash of the bytes it saw, so it is matched
 * against the hashes of what those bytes may have been; it stays valid with no `repair` run.
 * One final line end is tried, not more: that is what an editor adds or removes.
 */
export function earlierSqlContentHashes(bytes: Uint8Array): Promise<string[]> {
  const lf = withLfEndings(bytes);
  const body = hasBom(lf) ? lf.subarray(BOM.length) : lf;
  const ends = [body, concat(body, [LF])];
  if (body[body.length - 1] === LF) ends.push(body.subarray(0, body.length - 1));
  return Promise.all(
    ends.flatMap((text) => [text, concat(BOM, text)]).map((text) => rawContentHash(text)),
  );
}

const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

function hasBom(bytes: Uint8Array): boolean {
  return bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];
}

function concat(a: ArrayLike<number>, b: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** `bytes` with CRLF and lone CR read as LF: the same array where there is no CR. */
function withLfEndings(bytes: Uint8Array): Uint8Array {
  if (!bytes.includes(CR)) return bytes;
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
  return out.subarray(0, n);
}
