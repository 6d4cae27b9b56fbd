// What a StorageError says: the store, the operation and the key shown safely, and the reason too,
// which may carry a platform's message holding the key (a file's path) as it is.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { StorageError } from "../../src/storage/storage_error.ts";
import { propertyOptions } from "../property.ts";

// What would forge a line or reorder a terminal's text.
// deno-lint-ignore no-control-regex -- the characters no message may hold
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("StorageError", () => {
  it("names the store, the operation and the key", () => {
    const error = new StorageError("files", "get", "a/b.txt", "io", "EACCES: permission denied");
    assert.equal(error.message, 'storage "files": get "a/b.txt": EACCES: permission denied');
    assert.deepEqual([error.store, error.operation, error.key, error.kind], [
      "files",
      "get",
      "a/b.txt",
      "io",
    ]);
    assert.equal(
      new StorageError("files", "check", undefined, "unavailable", "gone").message,
      'storage "files": check: gone',
    );
  });

  it("writes no character that could forge a line or reorder a terminal's text, from any part", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 30 }),
        fc.string({ unit: "binary", maxLength: 30 }),
        fc.string({ unit: "binary", maxLength: 30 }),
        (store, key, reason) => {
          const { message } = new StorageError(store, "put", key, "io", reason);
          assert.doesNotMatch(message, UNSAFE);
        },
      ),
      propertyOptions(300),
    );
    const error = new StorageError(
      "files",
      "put",
      "a/\u2028x",
      "io",
      "EACCES: open '/srv/a/\u2028x'",
    );
    assert.equal(
      error.message,
      `storage "files": put "a/\\u2028x": EACCES: open '/srv/a/\\u2028x'`,
    );
  });
});
