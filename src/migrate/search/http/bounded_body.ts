import type { BodyBound, BodyLimit } from "./transport.ts";

// Room for a body of unknown length to start with; past it, the room doubles.
const FIRST_ROOM = 16 * 1024;
// The most room a declared length (which the host may not keep to) reserves up front.
const MOST_RESERVED = 1024 * 1024;

/**
 * An answer's body gathered as it comes, within its {@linkcode BodyLimit}. The first chunk is held
 * as it came, so that an answer in one chunk (most are) is never copied; from the second on, the
 * chunks are copied into one buffer, so that what is held is the body's bytes and no more (a
 * runtime may hand over each byte of a chunked answer as a view on a buffer of its own, 64 KiB on
 * Deno). The bound is chosen from the body's first two bytes whichever chunks they came in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BoundedBody } from "./bounded_body.ts";
 *
 * const body = new BoundedBody(() => ({ most: 4, over: () => new Error("over 4 bytes") }));
 * assert.equal(body.add(new Uint8Array([1, 2, 3])), undefined);
 * const whole = body.bytes();
 * assert.ok(whole instanceof Uint8Array);
 * assert.deepEqual([...whole], [1, 2, 3]);
 * assert.equal(body.add(new Uint8Array([4, 5]))?.message, "over 4 bytes");
 * ```
 */
export class BoundedBody {
  readonly #limit: BodyLimit;
  readonly #encoding: string | undefined;
  readonly #declared: number | undefined;
  // The body while it is its first chunk, as it came.
  #first: Uint8Array | undefined;
  // The body once a second chunk came: its bytes, and room for more.
  #room: Uint8Array | undefined;
  #length = 0;
  #bound: BodyBound | undefined;

  /**
   * A body bounded by `limit`, told `encoding` (the answer's `content-encoding`, in lower case);
   * `declared`, the length the answer says, reserves room up to 1 MiB once a second chunk comes.
   */
  constructor(limit: BodyLimit, encoding?: string, declared?: number) {
    this.#limit = limit;
    this.#encoding = encoding;
    this.#declared = declared;
  }

  /** Adds `chunk` (held or copied); the bound's error once the body is past it, and from then on. */
  add(chunk: Uint8Array): Error | undefined {
    const length = this.#length + chunk.length;
    if (this.#bound !== undefined && length > this.#bound.most) return this.#bound.over();
    if (this.#length === 0 && this.#room === undefined) {
      this.#first = chunk;
    } else {
      let room = this.#room ?? this.#reserved(length);
      if (length > room.length) {
        const larger = new Uint8Array(Math.max(length, room.length * 2));
        larger.set(room.subarray(0, this.#length));
        room = larger;
      }
      if (this.#first !== undefined) room.set(this.#first);
      this.#first = undefined;
      room.set(chunk, this.#length);
      this.#room = room;
    }
    this.#length = length;
    return this.#check(2);
  }

  /** The body, once it has ended: its bytes, or the bound's error. */
  bytes(): Uint8Array | Error {
    return this.#check(0) ?? this.#held();
  }

  #held(): Uint8Array {
    return this.#first ?? this.#room?.subarray(0, this.#length) ?? EMPTY;
  }

  // Room for a body of `length` bytes so far: what the answer declared, within reason.
  #reserved(length: number): Uint8Array {
    const declared = this.#declared;
    const reserve = declared !== undefined && Number.isSafeInteger(declared) && declared > 0
      ? Math.min(declared, MOST_RESERVED)
      : FIRST_ROOM;
    return new Uint8Array(Math.max(reserve, length));
  }

  // Chooses the bound once `enough` bytes came, and holds the body to it.
  #check(enough: number): Error | undefined {
    if (this.#bound === undefined) {
      if (this.#length < enough) return undefined;
      this.#bound = this.#limit(this.#encoding, this.#held());
    }
    return this.#length > this.#bound.most ? this.#bound.over() : undefined;
  }
}

const EMPTY = new Uint8Array(0);
