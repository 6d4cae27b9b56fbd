// PBKDF2 password hashes: Thaw's form round trips, Spring's forms are read, what is neither is not.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash, pbkdf2Sync } from "node:crypto";
import fc from "fast-check";
import {
  fromBase64,
  hashPassword,
  parsePasswordHash,
  passwordMatches,
  PBKDF2_ITERATIONS,
  sameBytes,
  toBase64,
} from "../../src/security/password_hash.ts";
import { propertyOptions } from "../property.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The key PBKDF2's HMAC-SHA256 uses for `password`: its UTF-8 bytes (a lone surrogate is U+FFFD, as
 * in Java), hashed when longer than the 64-byte block, then padded with zeros to it. Two passwords
 * with one key are one password to PBKDF2, in Java's and Spring Security's too: "abc" and "abc\0".
 */
function hmacKey(password: string): string {
  const bytes = new TextEncoder().encode(password);
  const key = bytes.length > 64 ? createHash("sha256").update(bytes).digest() : bytes;
  return [...key, ...new Array<number>(64 - key.length).fill(0)].join();
}

describe("password hashes", () => {
  it("writes {pbkdf2-sha256} with OWASP's count by default, which it reads back", async () => {
    assert.equal(PBKDF2_ITERATIONS, 600_000);
    const stored = await hashPassword("correct horse battery staple");
    assert.match(stored, /^\{pbkdf2-sha256\}600000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    const hash = parsePasswordHash(stored);
    assert.ok(hash !== undefined);
    assert.equal(hash.iterations, 600_000);
    assert.equal(await passwordMatches("correct horse battery staple", hash), true);
    assert.equal(await passwordMatches("correct horse battery stapl", hash), false);
    assert.notEqual(
      await hashPassword("x", { iterations: 1000 }),
      await hashPassword("x", { iterations: 1000 }),
    );
  });

  it("derives what node:crypto's PBKDF2 derives (an implementation of its own)", async () => {
    const stored = await hashPassword("pässwörd ☃", { iterations: 1234 });
    const [, salt, hash] = stored.slice("{pbkdf2-sha256}".length).split("$");
    const expected = pbkdf2Sync(
      Buffer.from("pässwörd ☃", "utf8"),
      fromBase64(salt)!,
      1234,
      32,
      "sha256",
    );
    assert.equal(toBase64(new Uint8Array(expected)), hash);
  });

  it("reads Spring Security's {pbkdf2} (its documentation's hash of 'password')", async () => {
    const hash = parsePasswordHash(
      "{pbkdf2}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8dc",
    );
    assert.ok(hash !== undefined);
    assert.deepEqual([hash.digest, hash.iterations, hash.salt.length], ["SHA-1", 185_000, 8]);
    assert.equal(await passwordMatches("password", hash), true);
    assert.equal(await passwordMatches("Password", hash), false);
  });

  it("reads {pbkdf2@SpringSecurity_v5_8}: hex of a 16 byte salt then PBKDF2-HMAC-SHA256 x 310000", async () => {
    const salt = new Uint8Array(16).map((_, i) => i * 7);
    const derived = pbkdf2Sync("s3cret", salt, 310_000, 32, "sha256");
    const hash = parsePasswordHash(
      `{pbkdf2@SpringSecurity_v5_8}${hex(salt)}${derived.toString("hex")}`,
    );
    assert.ok(hash !== undefined);
    assert.equal(await passwordMatches("s3cret", hash), true);
    assert.equal(await passwordMatches("s3cre", hash), false);
  });

  it("reads no other form, and no cut, padded or altered one", async () => {
    const good = await hashPassword("x", { iterations: 1000 });
    const [iterations, salt, hash] = good.slice("{pbkdf2-sha256}".length).split("$");
    for (
      const stored of [
        "",
        "password",
        "{bcrypt}$2a$10$dXJ3SW6G7P50lGmMkkmwe.20cQQubK3.HZWzG3YB1tlRy.fqvM/BG",
        "{noop}password",
        "{sha256}97cde38028ad898ebc02e690819fa220e88c62e0699403e94fff291cfffaf8410849f27605abcbc0",
        "{PBKDF2-SHA256}" + good.slice(15),
        `{pbkdf2-sha256}0$${salt}$${hash}`,
        `{pbkdf2-sha256}0${iterations}$${salt}$${hash}`,
        `{pbkdf2-sha256}99999999$${salt}$${hash}`,
        `{pbkdf2-sha256}${iterations}$${salt}$${hash.slice(0, -1)}`,
        `{pbkdf2-sha256}${iterations}$ ${salt}$${hash}`,
        `{pbkdf2-sha256}${iterations}$${salt}$${hash}\n`,
        `{pbkdf2-sha256}${iterations}$${salt}$${hash}$`,
        `{pbkdf2-sha256}${iterations}$$${hash}`,
        "{pbkdf2}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8",
        "{pbkdf2}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8dcz0",
        "{pbkdf2@SpringSecurity_v5_8}5d923b44a6d129f3ddf3e3c8d29412723dcbde72445e8ef6bf3b508fbf17fa4ed4d6b99ca763d8dc",
        "{constructor}00",
        "{__proto__}00",
      ]
    ) {
      assert.equal(parsePasswordHash(stored), undefined, JSON.stringify(stored));
    }
    await assert.rejects(
      hashPassword("x", { iterations: 999 }),
      /iterations must be an integer from 1000/,
    );
  });

  it("takes a password and the same with NUL bytes after it for one, as every PBKDF2 does", async () => {
    for (const [password, other] of [["abc", "abc\u0000"], ["\u0000", ""], ["", "\u0000\u0000"]]) {
      const hash = parsePasswordHash(await hashPassword(password, { iterations: 1000 }))!;
      assert.equal(await passwordMatches(other, hash), true, JSON.stringify([password, other]));
      const derived = (text: string) =>
        pbkdf2Sync(text, "salt", 1000, 32, "sha256").toString("hex");
      assert.equal(derived(password), derived(other), "node:crypto's PBKDF2 agrees");
    }
    const hash = parsePasswordHash(await hashPassword("abc", { iterations: 1000 }))!;
    assert.equal(await passwordMatches("abc\u0000x", hash), false);
    assert.equal(await passwordMatches("\u0000abc", hash), false);
  });

  it("round trips any password and any salt through the stored form (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.string({ unit: "binary", maxLength: 40 }),
        async (password, other) => {
          const hash = parsePasswordHash(await hashPassword(password, { iterations: 1000 }));
          assert.ok(hash !== undefined);
          assert.equal(await passwordMatches(password, hash), true);
          assert.equal(await passwordMatches(other, hash), hmacKey(password) === hmacKey(other));
        },
      ),
      propertyOptions(30),
    );
  });

  it("reads base64 only in the one form it writes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.string({ maxLength: 12 }), (bytes, text) => {
        assert.deepEqual(fromBase64(toBase64(bytes)), bytes);
        const read = fromBase64(text);
        if (read !== undefined) assert.equal(toBase64(read), text);
      }),
      propertyOptions(),
    );
  });

  it("compares bytes wholly", () => {
    assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
    assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
    assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2])), false);
  });
});
