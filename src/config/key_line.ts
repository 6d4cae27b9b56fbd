/**
 * The line of `key` in `lines`, else of its nearest parent that has one (a key that is missing,
 * or that came from an alias, is pointed at where its parent is); `undefined` when none has.
 */
export function keyLine(
  lines: ReadonlyMap<string, number> | undefined,
  key: string,
): number | undefined {
  for (let k = key; k !== ""; k = k.replace(/(\.[^.[]*|\[\d+\])$/, "")) {
    const line = lines?.get(k);
    if (line !== undefined) return line;
    if (!/[.[]/.test(k)) break;
  }
  return undefined;
}
