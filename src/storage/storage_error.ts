// What every failed operation of an `ObjectStorage` throws: one class, naming the store, the
// operation and the key, so that a log line says which upload failed where.
import { printable, shownValue } from "../shown_value.ts";
import type { StorageFaultKind } from "./storage_driver.ts";

/** An operation of `ObjectStorage`, as errors, metrics and spans name it. */
export type StorageOperation =
  | "put"
  | "get"
  | "head"
  | "delete"
  | "copy"
  | "list"
  | "signedUrl"
  | "response"
  | "check";

/** Why an operation failed: a driver's fault, a key or an option refused, or an I/O error. */
export type StorageErrorKind = StorageFaultKind | "key" | "option" | "io";

/**
 * An operation of an `ObjectStorage` that failed: `store` (the bean's name), `operation`, `key`
 * (or the listing's prefix), and `kind`, what a caller can act on (`exists` when `ifNoneMatch` met
 * an object, `unavailable` when the store did not answer, `key` when the key was refused before
 * any I/O); the driver's error, when there was one, as its `cause`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StorageError } from "@thaw/thaw/storage";
 *
 * const error = new StorageError("uploads", "put", "a\nb", "key", 'a key holds no control character');
 * assert.equal(
 *   error.message,
 *   'storage "uploads": put "a\\nb": a key holds no control character',
 * );
 * assert.equal(error.kind, "key");
 * ```
 */
export class StorageError extends Error {
  /** The store's bean name. */
  readonly store: string;
  /** What was being done. */
  readonly operation: StorageOperation;
  /** The key (or for `list`, the prefix) it was done to, when there was one. */
  readonly key: string | undefined;
  /** Why it failed. */
  readonly kind: StorageErrorKind;

  /**
   * The failure of `operation` of the store `store` on `key`, of kind `kind`, for `reason`.
   */
  constructor(
    store: string,
    operation: StorageOperation,
    key: string | undefined,
    kind: StorageErrorKind,
    reason: string,
    options?: ErrorOptions,
  ) {
    const target = key === undefined ? "" : ` ${shownValue(key)}`;
    // The reason may hold a platform's message, with a file's path as the key made it.
    super(`storage ${shownValue(store)}: ${operation}${target}: ${printable(reason)}`, options);
    this.name = "StorageError";
    this.store = store;
    this.operation = operation;
    this.key = key;
    this.kind = kind;
  }
}
