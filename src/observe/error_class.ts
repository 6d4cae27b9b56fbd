// What OpenTelemetry's `error.type` says of a thrown value where no code names the failure: its
// class, never its message (which may quote a record, a payload or a secret). Pure.

/**
 * The conventions' `error.type` of `error`: its class's name, `_OTHER` for what is no `Error`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorClassOf } from "./error_class.ts";
 *
 * assert.equal(errorClassOf(new RangeError("order 42 is out of stock")), "RangeError");
 * assert.equal(errorClassOf("a string"), "_OTHER");
 * ```
 */
export function errorClassOf(error: unknown): string {
  if (!(error instanceof Error)) return "_OTHER";
  const name = error.constructor?.name;
  return typeof name === "string" && name !== "" ? name : error.name || "_OTHER";
}
