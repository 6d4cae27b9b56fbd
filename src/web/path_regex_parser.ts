// What compile.ts loads, when a path holds a `{name:regex}` variable: the parser alone, so that
// the lazy module a one-file bundle makes of path_regex.ts exports one name, not its test hooks.
export { parsePathRegex } from "./path_regex.ts";
