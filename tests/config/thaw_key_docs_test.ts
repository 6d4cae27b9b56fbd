import { describe, it } from "node:test";
import assert from "node:assert/strict";
// The keys of the actuator, the client address and the logging feature are declared with their
// modules: these tests read them too.
import "../../src/config/management_keys.ts";
import "../../src/config/forward_headers_keys.ts";
import "../../src/config/logging_keys.ts";
import "../../src/config/task_keys.ts";
import "../../src/config/kafka_keys.ts";
import "../../src/config/job_keys.ts";
import "../../src/config/security_keys.ts";
import "../../src/config/broadcast_keys.ts";
import "../../src/config/security_scheme_keys.ts";
import { KEY_DOCS } from "../../src/config/thaw_key_docs.ts";
import { keyDeclarations } from "../../src/config/thaw_keys.ts";

describe("KEY_DOCS", () => {
  it("holds one sentence per declared key, that a table row can hold", () => {
    // As sets: the order of the declarations beyond the core's is the order of the imports.
    assert.deepEqual(
      Object.keys(KEY_DOCS).sort(),
      keyDeclarations().map(([key]) => key).sort(),
    );
    for (const [key, doc] of Object.entries(KEY_DOCS)) {
      // A `|` or a line break would end the reference table's row early.
      assert.match(doc, /^[A-Z`][^|\n]*\.$/, key);
    }
  });
});
