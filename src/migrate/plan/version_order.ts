import { compareDigits, isRepeatable } from "./migration_name.ts";

/**
 * The order migration files run in: by path, folder by folder. In each name, a leading version
 * (digits joined by `.` or `_`, after any text) compares as a list of numbers, a shorter list first;
 * the text before it and everything after it compare with runs of digits as numbers and other
 * characters by code point. So versions sort as people read them: `1.0 < 1.0.1 < 1.9 < 1.10 <
 * 2.0 < 10.0`, `1.0.json` before `1.0.1.json`, Flyway's `V1__init.sql < V1_1__fix.sql <
 * V2__x.sql < V10__x.sql`, and `release-1.0/` runs before `release-1.0.1/` (byte order puts `.`
 * before `/`, and would not). Repeatable files (`R__view.sql`, in any folder) come after every
 * other file, ordered among themselves the same way.
 *
 * Paths that read as the same version (`01` and `1`) fall back to code point order, so the order
 * is total: no two different paths compare equal. (Two Flyway-form names of one version, `V1__a`
 * and `V1.0__b`, never get this far: `migration_name.ts` refuses them before a run plans.)
 */
export function compareVersionPaths(a: string, b: string): number {
  // Flyway's repeatable files run after every other file, as Flyway runs them after every version.
  const repeatable = Number(isRepeatable(a)) - Number(isRepeatable(b));
  if (repeatable !== 0) return repeatable;
  const x = a.split("/"), y = b.split("/");
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const c = compareSegments(x[i], y[i]);
    if (c !== 0) return c;
  }
  return x.length - y.length || compareCodePoints(a, b);
}

// Text without digits, then a version (`1`, `1.0.1`, `2_1`), then the rest of the name.
const SEGMENT = /^(\D*)(\d+(?:[._]\d+)*)?([\s\S]*)$/;

/** One name: the text before its version, the version as numbers, then the rest; 0 for `01`/`1`. */
function compareSegments(a: string, b: string): number {
  const [, headA, versionA = "", restA] = SEGMENT.exec(a)!;
  const [, headB, versionB = "", restB] = SEGMENT.exec(b)!;
  // A version starts like a digit would: `logs-x` still sorts before `logs2-x`, as in byte order.
  const head = compareCodePoints(headA + (versionA ? "0" : ""), headB + (versionB ? "0" : ""));
  if (head !== 0) return head;
  const partsA = versionA === "" ? [] : versionA.split(/[._]/);
  const partsB = versionB === "" ? [] : versionB.split(/[._]/);
  for (let i = 0; i < Math.min(partsA.length, partsB.length); i++) {
    const c = compareDigits(partsA[i], partsB[i]);
    if (c !== 0) return c;
  }
  return partsA.length - partsB.length || compareNatural(restA, restB);
}

const isDigit = (code: number) => code >= 48 && code <= 57;

/** Text after a version: digit runs by value, other characters by code point; 0 for `01` and `1`. */
function compareNatural(a: string, b: string): number {
  let i = 0, j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i), cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i, ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      const c = compareDigits(a.slice(i, ei), b.slice(j, ej));
      if (c !== 0) return c;
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
export function compareCodePoints(a: string, b: string): number {
  const x = [...a], y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
