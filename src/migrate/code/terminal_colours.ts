// Deno colours the locations in an import's error for a terminal (`\u001b[36mfile:///…\u001b[0m:
// \u001b[33m1\u001b[0m`): a report is read by programs and logs, and a location is read as text.
// deno-lint-ignore no-control-regex -- the escape sequences are what this drops
const TERMINAL_COLOURS = /\u001b\[[0-9;]*m/g;

/** `text` without the terminal's colour sequences. */
export function withoutColours(text: string): string {
  return text.replace(TERMINAL_COLOURS, "");
}
