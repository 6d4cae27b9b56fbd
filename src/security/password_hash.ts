/**
 * Password hashes with PBKDF2 (Web Crypto: the same on Deno, Bun, Node and workerd, and no
 * dependency). Thaw writes `{pbkdf2-sha256}<iterations>$<salt>$<hash>` (salt and hash in base64),
 * a form that names its own cost, so a hash made with more iterations later is read beside older
 * ones. It also reads what Spring Security's `DelegatingPasswordEncoder` writes with
 * `Pbkdf2PasswordEncoder` (hex of salt then hash, the cost implied by the id), so a user table
 * moved from a Spring service keeps its hashes:
 *
 * - `{pbkdf2@SpringSecurity_v5_8}`: HMAC-SHA-256, 310,000 iterations, a 16 byte salt, 32 bytes;
 * - `{pbkdf2}`: HMAC-SHA-1, 185,000 iterations, an 8 byte salt, 32 bytes (Spring 5.5's
 *   defaults, which Spring still reads under that id).
 *
 * Spring's optional secret ("pepper") is not supported: its hashes made with one do not match.
 * bcrypt is not supported: no well-kept npm package of it runs on workerd as well as on the other
 * runtimes without native code or a WebAssembly build of its own (bcryptjs is pure JS, but its
 * 2^10+ rounds of Blowfish in JS block the event loop for the whole check, where Web Crypto's
 * PBKDF2 runs off it).
 *
 * @module
 */

/** OWASP's Password Storage Cheat Sheet's count for PBKDF2-HMAC-SHA256 (2023 and since). */
export const PBKDF2_ITERATIONS = 600_000;

/** The most iterations a stored hash may ask for: beyond it, one login would hold a core for seconds. */
const MAX_ITERATIONS = 10_000_000;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/** A stored hash, read: what {@linkcode passwordMatches} derives again and compares. */
export interface PasswordHash {
  /** The HMAC of PBKDF2. */
  readonly digest: "SHA-256" | "SHA-1";
  readonly iterations: number;
  readonly salt: Uint8Array;
  /** The derived bytes. */
  readonly hash: Uint8Array;
}

const THAW_FORM =
  /^\{pbkdf2-sha256\}([1-9][0-9]{0,7})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;
// Spring compares the salt too, but it compares it with itself: the hash alone decides.
const SPRING_FORMS: Readonly<
  Record<string, Pick<PasswordHash, "digest" | "iterations"> & { readonly saltBytes: number }>
> = {
  "{pbkdf2@SpringSecurity_v5_8}": { digest: "SHA-256", iterations: 310_000, saltBytes: 16 },
  "{pbkdf2}": { digest: "SHA-1", iterations: 185_000, saltBytes: 8 },
};

/**
 * A hash of `plain` in Thaw's form, with a random salt of 16 bytes and, unless `iterations` says
 * otherwise, {@linkcode PBKDF2_ITERATIONS}. For users to make the hashes their
 * `UserDetailsService` returns (`deno eval`, a sign-up handler).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hashPassword } from "@thaw/thaw/security";
 *
 * const stored = await hashPassword("correct horse", { iterations: 1000 });
 * assert.match(stored, /^\{pbkdf2-sha256\}1000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
 * // A random salt: the same password hashes differently each time.
 * assert.notEqual(await hashPassword("correct horse", { iterations: 1000 }), stored);
 * ```
 */
export async function hashPassword(
  plain: string,
  options: { readonly iterations?: number } = {},
): Promise<string> {
  const iterations = options.iterations ?? PBKDF2_ITERATIONS;
  if (!Number.isInteger(iterations) || iterations < 1000 || iterations > MAX_ITERATIONS) {
    throw new RangeError(
      `hashPassword: iterations must be an integer from 1000 to ${MAX_ITERATIONS}, got ${iterations}`,
    );
  }
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(plain, "SHA-256", salt, iterations, HASH_BYTES);
  return `{pbkdf2-sha256}${iterations}$${toBase64(salt)}$${toBase64(hash)}`;
}

/**
 * The stored hash `stored` read, or `undefined` when it is none of the forms above (another
 * scheme such as `{bcrypt}`, a plain text, a cut or altered hash): the caller refuses the login
 * and never says why to the client. Pure.
 */
export function parsePasswordHash(stored: string): PasswordHash | undefined {
  const thaw = THAW_FORM.exec(stored);
  if (thaw !== null) {
    const iterations = Number(thaw[1]);
    const salt = fromBase64(thaw[2]);
    const hash = fromBase64(thaw[3]);
    if (
      iterations > MAX_ITERATIONS || salt === undefined || hash === undefined ||
      salt.length < 8 || salt.length > 64 || hash.length < 16 || hash.length > 64
    ) {
      return undefined;
    }
    return { digest: "SHA-256", iterations, salt, hash };
  }
  const id = stored.slice(0, stored.indexOf("}") + 1);
  if (!Object.hasOwn(SPRING_FORMS, id)) return undefined;
  const form = SPRING_FORMS[id];
  const bytes = fromHex(stored.slice(id.length));
  if (bytes === undefined || bytes.length !== form.saltBytes + HASH_BYTES) return undefined;
  return {
    digest: form.digest,
    iterations: form.iterations,
    salt: bytes.slice(0, form.saltBytes),
    hash: bytes.slice(form.saltBytes),
  };
}

/**
 * Whether `plain` derives the hash `stored` holds: derived again with its salt and cost, then
 * compared in constant time (every byte, whatever the first that differs).
 */
export async function passwordMatches(plain: string, stored: PasswordHash): Promise<boolean> {
  const derived = await derive(
    plain,
    stored.digest,
    stored.salt,
    stored.iterations,
    stored.hash.length,
  );
  return sameBytes(derived, stored.hash);
}

/**
 * Whether two byte arrays are equal, in a time that depends on their length only (the lengths
 * here are the format's, never a secret).
 */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

async function derive(
  plain: string,
  digest: PasswordHash["digest"],
  salt: Uint8Array,
  iterations: number,
  bytes: number,
): Promise<Uint8Array> {
  // UTF-8, as Java's PBKDF2 encodes a password's chars: Spring's hashes of non-ASCII passwords match.
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(plain),
    "PBKDF2",
    false,
    ["deriveBits"],
  );
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: digest, salt: salt as Uint8Array<ArrayBuffer>, iterations },
    key,
    bytes * 8,
  );
  return new Uint8Array(bits);
}

/** Standard base64 with its padding. */
export function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

/**
 * The bytes of a standard, padded base64 text, or `undefined` unless it is exactly the text
 * {@linkcode toBase64} writes for them (`atob` forgives spaces and stray bits; a hash must not be
 * read two ways).
 */
export function fromBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  let decoded: string;
  try {
    decoded = atob(text);
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(decoded, (c) => c.charCodeAt(0));
  return toBase64(bytes) === text ? bytes : undefined;
}

function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
