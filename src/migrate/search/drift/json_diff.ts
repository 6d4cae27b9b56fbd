import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { type Mask, noMask } from "../../../config/secrets_mask.ts";
import { renderValue } from "../render_value.ts";

/**
 * A generic JSON diff: how one JSON value (a file's) differs from another (the cluster's), as
 * short lines under dotted paths. It knows nothing of templates, indices, policies or aliases: a
 * resource's rules (`*_rules.ts` beside this file) bring both sides to one form first, and pass
 * {@linkcode Rules} that say which keys the cluster may add, what the cluster leaves out at its
 * default, and whether a difference can be fixed by applying the file again. Pure (no I/O).
 *
 * - Objects are compared key by key, in the file's order, then the cluster's extra keys; lists of
 *   one length item by item; anything else, and a list, object or scalar against another kind, as
 *   one value.
 * - Scalars are equal when their text is: `10` and `"10"`, `false` and `"false"`.
 * - Live bodies are untrusted: no key is ever assigned to a plain object (`__proto__` stays a key),
 *   nothing recurses on the cluster's depth, and the list of differences is bounded.
 */

/** One way a live resource differs from its file. */
export interface Difference {
  /** Where, dotted: `template.settings.index.number_of_shards`; `""` for the resource itself. */
  readonly path: string;
  /** As the report shows it: `template.settings.index.number_of_shards: file "1", cluster "2"`. */
  readonly text: string;
  /**
   * Whether applying the file again can change it: not a static setting of a live index, a field
   * its file does not declare, or a field's type.
   */
  readonly fixable: boolean;
}

/** At most this many differences per resource are listed; the rest are counted. */
export const MAX_DIFFERENCES = 50;

/** What is said of a key the file has and the cluster does not. */
export const IN_FILE_ONLY = "in the file, not in the cluster";
/** What is said of a key the cluster has and the file does not. */
export const IN_CLUSTER_ONLY = "in the cluster, not in the file";

// ---------------------------------------------------------------------------------------------
// Paths

/**
 * One step of a path, linked to its parent: a path is never copied while walking. A resource's
 * rules may extend it with what they need to know of a step (see {@linkcode Rules.step}).
 */
export interface Step {
  readonly key: string | number;
  // Undefined at the root: a step is made from its parent, whichever it is.
  readonly parent?: Step | undefined;
}

const PLAIN_KEY = /^[A-Za-z0-9_@$][A-Za-z0-9_@$.\-]{0,99}$/;

/**
 * A path as a report shows it: `a.b[0]`, a key that is not plain quoted (`a["x y"]`, cut after 60
 * characters), each key through `redact`; `""` for the root.
 */
export function pathText(step: Step | undefined, redact: Mask = noMask): string {
  const parts: string[] = [];
  for (let s = step; s !== undefined; s = s.parent) {
    const key = typeof s.key === "number" ? s.key : redact(s.key);
    parts.push(
      typeof key === "number"
        ? `[${key}]`
        : PLAIN_KEY.test(key)
        ? `.${key}`
        : `[${JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key)}]`,
    );
  }
  const text = parts.reverse().join("");
  return text.startsWith(".") ? text.slice(1) : text;
}

// ---------------------------------------------------------------------------------------------
// The list of differences

/** Collects differences, at most {@linkcode MAX_DIFFERENCES}; the rest are counted. */
export class Differences {
  readonly list: Difference[] = [];
  more = 0;
  moreFixable = false;

  constructor(readonly redact: Mask = noMask) {}

  /** `value` as a message shows it. */
  show(value: unknown): string {
    return renderValue(value, 80, this.redact);
  }

  add(step: Step | undefined, body: string, fixable: boolean, note?: string): void {
    if (this.list.length >= MAX_DIFFERENCES) {
      this.more++;
      this.moreFixable ||= fixable;
      return;
    }
    const path = pathText(step, this.redact);
    const text = `${path === "" ? "" : `${path}: `}${body}${
      note === undefined ? "" : ` (${note})`
    }`;
    this.list.push({ path, text, fixable });
  }

  /** The list, and a last line counting what did not fit in it. */
  done(): Difference[] {
    if (this.more === 0) return this.list;
    return [...this.list, {
      path: "",
      text: `and ${this.more} more difference(s)`,
      fixable: this.moreFixable,
    }];
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing

/** What a difference is, for the notes and whether a re-apply can change it. */
export type Kind = "changed" | "missing" | "extra";

/** What a comparison reports, and what it may leave out; `S`: the steps the rules tell apart. */
export interface Rules<S extends Step = Step> {
  /**
   * A key the cluster has and the file does not: `report` it, `ignore` it (defaults the cluster
   * adds), or report it only under the objects for which the function is true.
   */
  readonly extras: "report" | "ignore" | ((at: S | undefined) => boolean);
  /** The step of `key` under `parent`; default: `{ key, parent }`. */
  readonly step?: (parent: S | undefined, key: string | number) => S;
  /** A note and whether a re-apply can change it; default: no note, fixable. */
  readonly classify?: (step: S, kind: Kind) => { note?: string; fixable: boolean };
  /**
   * A key of the file the cluster does not have that is no difference (the cluster leaves a value
   * at its default out). `object` is the file's object that holds it.
   */
  readonly absentIsDefault?: (
    key: string,
    value: unknown,
    object: JsonObject,
    step: S,
  ) => boolean;
}

/** Every key either side lacks is a difference; no notes. */
export const COMPARE_WHOLE = { extras: "report" } as const satisfies Rules;

function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** Two scalars are the same when their text is: `10` and `"10"`, `false` and `"false"`. */
export function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = scalarText(a);
  return x !== undefined && x === scalarText(b);
}

// Markers for a key one side lacks.
const MISSING = Symbol("missing");
const EXTRA = Symbol("extra");

// The default step: rules that give no `step` have steps of a key and a parent, nothing more.
function plainStep<S extends Step>(parent: S | undefined, key: string | number): S {
  return { key, parent } as S;
}

/**
 * Walks `file` and `cluster` side by side from `at`, without recursion, and adds to `out` how they
 * differ: objects key by key (in the file's order, then the cluster's extra keys), lists of one
 * length item by item, anything else as a scalar. Only what both sides hold as objects or lists is
 * descended into.
 */
export function walk<S extends Step>(
  file: unknown,
  cluster: unknown,
  at: S | undefined,
  rules: Rules<S>,
  out: Differences,
): void {
  const child = rules.step ?? plainStep<S>;
  const extras = rules.extras;
  const report = (step: S | undefined, kind: Kind, body: string) => {
    const c = step === undefined
      ? { fixable: true }
      : rules.classify?.(step, kind) ?? { fixable: true };
    out.add(step, body, c.fixable, c.note);
  };
  const stack: [unknown, unknown, S | undefined][] = [[file, cluster, at]];
  while (stack.length > 0) {
    const [f, c, step] = stack.pop()!;
    if (isJsonObject(f) && isJsonObject(c)) {
      const next: [unknown, unknown, S | undefined][] = [];
      for (const key of Object.keys(f)) {
        const sub = child(step, key);
        if (Object.hasOwn(c, key)) next.push([f[key], c[key], sub]);
        else if (!rules.absentIsDefault?.(key, f[key], f, sub)) {
          next.push([f[key], MISSING, sub]);
        }
      }
      if (extras === "report" || (typeof extras === "function" && extras(step))) {
        for (const key in c) {
          if (Object.hasOwn(c, key) && !Object.hasOwn(f, key)) {
            next.push([EXTRA, c[key], child(step, key)]);
          }
        }
      }
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    } else if (c === MISSING) {
      report(step, "missing", IN_FILE_ONLY);
    } else if (f === EXTRA) {
      report(step, "extra", IN_CLUSTER_ONLY);
    } else if (Array.isArray(f) && Array.isArray(c) && f.length === c.length) {
      for (let i = f.length - 1; i >= 0; i--) stack.push([f[i], c[i], child(step, i)]);
    } else if (
      Array.isArray(f) || Array.isArray(c) || isJsonObject(f) || isJsonObject(c) ||
      !sameScalar(f, c)
    ) {
      report(step, "changed", `file ${out.show(f)}, cluster ${out.show(c)}`);
    }
  }
}

/**
 * How `cluster` differs from `file`: {@linkcode walk} from `at` (default: the root) under `rules`
 * (default: {@linkcode COMPARE_WHOLE}), at most {@linkcode MAX_DIFFERENCES} and a line counting the
 * rest.
 */
export function diffJson<S extends Step = Step>(
  file: unknown,
  cluster: unknown,
  options: {
    readonly at?: NoInfer<S> | undefined;
    readonly rules?: Rules<S>;
    readonly redact?: Mask;
  } = {},
): Difference[] {
  const out = new Differences(options.redact);
  walk(file, cluster, options.at, options.rules ?? COMPARE_WHOLE, out);
  return out.done();
}
