/**
 * How a path variable, parameter or header is converted: `Number` (an integer), `String` (as
 * sent) or `Boolean` (`true`/`false`/`1`/`0`), or a function of the text that throws when the
 * text is unacceptable.
 */
export type ScalarType =
  | NumberConstructor
  | StringConstructor
  | BooleanConstructor
  | ((text: string) => unknown);
