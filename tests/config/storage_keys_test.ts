// The key of @thaw/thaw/storage: declared once its entry is imported, so that `storage:` is
// Thaw's, read by the storage feature; a store list is checked by it (storage_settings_test.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { STORAGE_KEYS } from "../../src/config/storage_keys.ts";
import { keyDeclarations } from "../../src/config/thaw_keys.ts";

describe("storage keys", () => {
  it("declares storage, read as it is by the feature", () => {
    assert.deepEqual(STORAGE_KEYS, { storage: { type: "feature" } });
    assert.deepEqual(new Map(keyDeclarations()).get("storage"), { type: "feature" });
  });
});
