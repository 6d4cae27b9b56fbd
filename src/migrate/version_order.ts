/**
 * The order migration files run in: by path, folder by folder, comparing runs of ASCII digits as
 * numbers and everything else by code point, so that versions sort as people read them:
 * `1.0 < 1.0.1 < 1.9 < 1.10 < 2.0 < 10.0`, `V2__x.sql < V10__x.sql`, and `release-1.0/` runs
 * before `release-1.0.1/` (byte order puts `.` before `/`, and would not).
 *
 * Paths that read as the same version (`01` and `1`) fall back to code point order, so the order
 * is total: no two different paths compare equal.
 */
export function compareVersionPaths(a: string, b: string): number {
  const x = a.split("/"), y = b.split("/");
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const c = compareNatural(x[i], y[i]);
    if (c !== 0) return c;
  }
  return x.length - y.length || compareCodePoints(a, b);
}

const isDigit = (code: number) => code >= 48 && code <= 57;

/** One path segment: digit runs by value, other characters by code point; 0 for `01` and `1`. */
function compareNatural(a: string, b: string): number {
  let i = 0, j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i), cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i, ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      // By value without a number type: leading zeros off, then the longer run is larger, then
      // digit by digit. No length limit, no precision lost.
      const da = a.slice(i, ei).replace(/^0+/, ""), db = b.slice(j, ej).replace(/^0+/, "");
      if (da.length !== db.length) return da.length - db.length;
      if (da !== db) return da < db ? -1 : 1;
      i = ei, j = ej;
      continue;
    }
    const pa = a.codePointAt(i)!, pb = b.codePointAt(j)!;
    if (pa !== pb) return pa - pb;
    i += pa > 0xffff ? 2 : 1;
    j += pb > 0xffff ? 2 : 1;
  }
  return (a.length - i) - (b.length - j);
}

/** Code point order (what UTF-8 byte order gives), unlike `<` on strings (UTF-16 code units). */
function compareCodePoints(a: string, b: string): number {
  const x = [...a], y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
