/**
 * A dotted key (`search[0].hosts[1]`) and each key above it, the nearest first:
 * `search[0].hosts[1]`, `search[0].hosts`, `search[0]`, `search`.
 */
export function keyAndParents(key: string): string[] {
  const out: string[] = [];
  for (let k = key; k !== "";) {
    out.push(k);
    const parent = k.replace(/(\.[^.[]*|\[\d+\])$/, "");
    if (parent === k) break;
    k = parent;
  }
  return out;
}

/**
 * The line of `key` in `lines`, else of its nearest parent that has one (a key that is missing,
 * or that came from an alias, is pointed at where its parent is); `undefined` when none has.
 */
export function keyLine(
  lines: ReadonlyMap<string, number> | undefined,
  key: string,
): number | undefined {
  for (const k of keyAndParents(key)) {
    const line = lines?.get(k);
    if (line !== undefined) return line;
  }
  return undefined;
}
