// A transport's failure names what it could not do and on which transport, says why, and keeps
// the client's error as its cause, whatever was thrown.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { transportFailure } from "../../src/broadcast/transport_failure.ts";
import { RUNTIME } from "../runtime.ts";

describe(`a broadcast transport's failure on ${RUNTIME}`, () => {
  it("names the action and the transport, and keeps the cause", () => {
    const cause = new Error("ECONNREFUSED 127.0.0.1:9");
    const error = transportFailure("publish on", 'Kafka at 127.0.0.1:9 (topic "t")', cause);
    assert.equal(
      error.message,
      'Broadcaster: could not publish on Kafka at 127.0.0.1:9 (topic "t"): ECONNREFUSED 127.0.0.1:9',
    );
    assert.equal(error.cause, cause);
  });

  it("says a thrown value that is not an Error as text", () => {
    const error = transportFailure("subscribe on", 'Redis at redis://h (channel "c")', "gone");
    assert.equal(
      error.message,
      'Broadcaster: could not subscribe on Redis at redis://h (channel "c"): gone',
    );
    assert.equal(error.cause, "gone");
  });
});
