// How a value from a cluster shows in a message: bounded whatever its size or depth. Its own
// module: the search client and the reindex steps quote bodies too, and need nothing else of drift.
import { type Mask, noMask } from "../../config/secrets_mask.ts";

/**
 * A value in a message: JSON, cut at about `budget` characters, whatever its size or depth; each
 * string and key through `redact` first, whole: a cut could split a secret from what marks it.
 */
export function renderValue(value: unknown, budget = 80, redact: Mask = noMask): string {
  let out = "";
  const visit = (v: unknown, depth: number): void => {
    if (out.length > budget) return;
    if (typeof v === "string") {
      const t = redact(v);
      out += JSON.stringify(t.length > budget ? `${t.slice(0, budget)}…` : t);
    } else if (v === null || typeof v !== "object") {
      out += String(v);
    } else if (depth >= 8) {
      out += Array.isArray(v) ? "[…]" : "{…}";
    } else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length && out.length <= budget; i++) {
        if (i > 0) out += ", ";
        visit(v[i], depth + 1);
      }
      out += "]";
    } else {
      out += "{";
      let first = true;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        if (out.length > budget) break;
        if (!first) out += ", ";
        first = false;
        const key = redact(k);
        out += `${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}: `;
        visit((v as Record<string, unknown>)[k], depth + 1);
      }
      out += "}";
    }
  };
  visit(value, 0);
  return out.length > budget ? `${out.slice(0, budget)}…` : out;
}
