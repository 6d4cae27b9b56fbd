// What the property tests of SQL rendering bind as values.
import fc from "fast-check";

/**
 * A value a statement binds: text, integers, doubles, booleans and null, then `more` (what one
 * test adds: text that would break SQL pasted in as it is, bigints).
 */
export function boundValue(...more: readonly fc.Arbitrary<unknown>[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    ...more,
  );
}
