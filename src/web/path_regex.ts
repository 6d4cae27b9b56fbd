/**
 * The regex of a `{name:regex}` path variable: a small subset of JavaScript's syntax, parsed and
 * checked when the app is compiled, so that no request can make matching slow and no value holds
 * a `/`. Pure: nothing here knows about requests.
 *
 * What is taken: literal characters and escaped punctuation (`\.`, `\-`), `\d \w \s`, classes with
 * ranges and negation (`[a-f0-9]`, `[^/.]`), groups `(...)` and `(?:...)`, alternation, and the
 * greedy quantifiers `? * + {n} {n,} {n,m}`. What is refused, each with its reason: `.`, `\D \W
 * \S` and any class that holds `/` (a variable is one segment), anchors and `\b` (the regex always
 * spans the whole segment), back-references, lookarounds, named groups, lazy quantifiers, and a
 * regex that can match an empty segment (no request has one).
 *
 * Matching stays linear in the segment's length: JavaScript's engine backtracks, and backtracks
 * exponentially only when a character can be matched in more than one way. Two rules rule that
 * out: no repeated part can match nothing (`(a*)*`), and the expression is deterministic (each
 * character has one place to go: `\d*\d*`, `(a|ab)+`, `\w+\d` and `(a+)+` are refused). A
 * deterministic expression leaves the engine one way forward at each character, so a failed
 * attempt costs a step per pattern element, not a search.
 */

/** UTF-16 code units (the regex runs without the `u` flag), as sorted, disjoint ranges. */
type CharSet = readonly (readonly [number, number])[];

/** A parsed regex: the tree the checks read and the matcher is written from. */
export type RegexNode =
  /** One code unit out of `set`; `text` is how the regex wrote it (`\d`, `[a-z]`, `x`). */
  | { readonly kind: "chars"; readonly set: CharSet; readonly text: string }
  | { readonly kind: "sequence"; readonly items: readonly RegexNode[] }
  | { readonly kind: "choice"; readonly options: readonly RegexNode[] }
  /** `max` is `Infinity` for `*`, `+` and `{n,}`; `text` is the repeated part and its quantifier. */
  | {
    readonly kind: "repeat";
    readonly body: RegexNode;
    readonly min: number;
    readonly max: number;
    readonly text: string;
  };

/** A checked `{name:regex}` constraint. */
export interface PathRegex {
  /** The regex as declared. */
  readonly source: string;
  readonly tree: RegexNode;
  /** Tests a whole decoded segment: anchored, without capture groups. */
  readonly regex: RegExp;
}

/**
 * The most characters a regex may stand for once its counts are written out (`[0-9a-f]{24}` is
 * 24): the checks run over that form, and a count of thousands is no segment's shape anyway.
 */
export const MAX_EXPANDED_SIZE = 1000;

const DIGIT: CharSet = [[0x30, 0x39]];
const WORD: CharSet = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
// What `\s` matches in JavaScript, outside `u` mode as in it.
const SPACE: CharSet = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const SLASH = 0x2f;
const ALPHANUMERIC = /[A-Za-z0-9]/;

function union(sets: readonly CharSet[]): CharSet {
  const all = sets.flat().map(([lo, hi]) => [lo, hi] as [number, number]).sort((a, b) =>
    a[0] - b[0]
  );
  const out: [number, number][] = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function negate(set: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0xffff) out.push([next, 0xffff]);
  return out;
}

function has(set: CharSet, unit: number): boolean {
  return set.some(([lo, hi]) => lo <= unit && unit <= hi);
}

/** The lowest code unit both sets hold, or `undefined`. */
function common(a: CharSet, b: CharSet): number | undefined {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i][0], b[j][0]);
    if (lo <= Math.min(a[i][1], b[j][1])) return lo;
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return undefined;
}

/** A code unit as a message shows it. */
function show(unit: number): string {
  return unit > 0x20 && unit < 0x7f
    ? JSON.stringify(String.fromCharCode(unit))
    : `"\\u${unit.toString(16).padStart(4, "0")}"`;
}

/** Parses and checks `{name:regex}`'s regex. Throws an `Error` saying what is wrong and why. */
export function parsePathRegex(source: string): PathRegex {
  const tree = parseRegexTree(source);
  checkRegexTree(tree);
  return { source, tree, regex: new RegExp(`^(?:${emit(tree)})$`) };
}

/**
 * The tree of a regex in the subset, unchecked for backtracking and empty matches; throws for
 * syntax outside the subset and for characters that can match `/`.
 */
export function parseRegexTree(source: string): RegexNode {
  if (source === "") throw new Error("the regex is empty; write {name} for any segment");
  return new Parser(source).parse();
}

// What the messages suggest for a class escape that holds `/`.
const COMPLEMENT: Record<string, string> = { D: "[^/0-9]", W: "[^/\\w]", S: "[^/\\s]" };

// A `{` that is not a count.
const noCount = (at: number) =>
  `"{" at ${at} starts no count {n}, {n,} or {n,m}; write \\{ for the character`;

class Parser {
  #at = 0;
  readonly #source: string;

  constructor(source: string) {
    this.#source = source;
  }

  parse(): RegexNode {
    const tree = this.#choice();
    if (this.#at < this.#source.length) this.#fail(`")" at ${this.#at} closes no group`);
    return tree;
  }

  #fail(why: string): never {
    throw new Error(why);
  }

  #peek(offset = 0): string | undefined {
    return this.#source[this.#at + offset];
  }

  #choice(): RegexNode {
    const options = [this.#sequence()];
    while (this.#peek() === "|") {
      this.#at++;
      options.push(this.#sequence());
    }
    return options.length === 1 ? options[0] : { kind: "choice", options };
  }

  #sequence(): RegexNode {
    const items: RegexNode[] = [];
    for (let c = this.#peek(); c !== undefined && c !== "|" && c !== ")"; c = this.#peek()) {
      const start = this.#at;
      const atom = this.#atom();
      items.push(this.#quantified(atom, start));
    }
    return items.length === 1 ? items[0] : { kind: "sequence", items };
  }

  #atom(): RegexNode {
    const start = this.#at;
    const c = this.#source[this.#at++];
    switch (c) {
      case "(": {
        if (this.#peek() === "?") {
          const kind = this.#peek(1);
          if (kind !== ":") {
            this.#fail(
              kind === "=" || kind === "!" || (kind === "<" && /[=!]/.test(this.#peek(2) ?? ""))
                ? `lookarounds ("(?${kind}") are not supported`
                : kind === "<"
                ? `named groups ("(?<") are not supported; use (?:...)`
                : `"(?${kind ?? ""}" is not supported; groups are (...) and (?:...)`,
            );
          }
          this.#at += 2;
        }
        const inner = this.#choice();
        if (this.#peek() !== ")") this.#fail(`the group opened at ${start} is not closed`);
        this.#at++;
        return inner;
      }
      case "[":
        return this.#charClass(start);
      case "\\":
        return this.#escape(start);
      case ".":
        return this.#fail(
          `"." matches any character, "/" included; use a class that leaves "/" out, such as [^/]`,
        );
      case "^":
      case "$":
        return this.#fail(`anchors ("${c}") are not needed: the regex always spans the segment`);
      case "*":
      case "+":
      case "?":
        return this.#fail(`"${c}" at ${start} repeats nothing`);
      case "{":
        return this.#fail(this.#count(start) ? `"{" at ${start} repeats nothing` : noCount(start));
      case "}":
      case "]":
        return this.#fail(`write \\${c} for the character "${c}" (at ${start})`);
    }
    return this.#chars([[c.charCodeAt(0), c.charCodeAt(0)]], c);
  }

  #chars(set: CharSet, text: string): RegexNode {
    if (has(set, SLASH)) {
      this.#fail(
        set.length === 1 && set[0][1] === SLASH
          ? `a variable is one segment: its regex cannot match "/"`
          : `"${text}" matches "/", and a variable is one segment`,
      );
    }
    if (set.length === 0) this.#fail(`"${text}" matches nothing`);
    return { kind: "chars", set, text };
  }

  // `\d`, `\w`, `\s`, or an escaped character that is not a letter or a digit.
  #escape(start: number): RegexNode {
    const c = this.#escaped();
    const text = this.#source.slice(start, this.#at);
    const set = this.#escapeSet(c, text);
    return this.#chars(set ?? [[c.charCodeAt(0), c.charCodeAt(0)]], text);
  }

  /** The set of a class escape, `undefined` for an escaped character; refuses the rest. */
  #escapeSet(c: string, text: string): CharSet | undefined {
    if (c === "d") return DIGIT;
    if (c === "w") return WORD;
    if (c === "s") return SPACE;
    if (c in COMPLEMENT) {
      return this.#fail(
        `"${text}" matches "/", and a variable is one segment; use ${COMPLEMENT[c]}`,
      );
    }
    if (c === "b" || c === "B") return this.#fail(`word boundaries ("${text}") are not supported`);
    if (/[0-9]/.test(c)) return this.#fail(`back-references ("${text}") are not supported`);
    if (ALPHANUMERIC.test(c)) {
      return this.#fail(
        `"${text}" is not supported: escapes are \\d, \\w, \\s and \\ before punctuation`,
      );
    }
    return undefined;
  }

  #charClass(start: number): RegexNode {
    const negated = this.#peek() === "^";
    if (negated) this.#at++;
    const sets: CharSet[] = [];
    let first = true;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#fail(`the class opened at ${start} is not closed`);
      if (c === "]") break;
      const begin = this.#at;
      const low = this.#classAtom();
      // `-` is a range between two characters; first or last in the class it is itself.
      if (this.#peek() === "-" && this.#peek(1) !== "]" && this.#peek(1) !== undefined) {
        this.#at++;
        const high = this.#classAtom();
        const text = this.#source.slice(begin, this.#at);
        if (typeof low !== "number" || typeof high !== "number") {
          this.#fail(`the range "${text}" needs one character at each end; write \\- for "-"`);
        }
        if (low > high) this.#fail(`the range "${text}" is out of order`);
        sets.push([[low, high]]);
        if (this.#peek() === "-" && this.#peek(1) !== "]") {
          this.#fail(`"-" after the range "${text}" is ambiguous; write \\- for the character`);
        }
      } else if (typeof low === "number") {
        if (this.#source[begin] === "-" && !first && this.#peek() !== "]") {
          this.#fail(`"-" at ${begin} is ambiguous; write \\- for the character`);
        }
        sets.push([[low, low]]);
      } else sets.push(low);
      first = false;
    }
    this.#at++;
    const text = this.#source.slice(start, this.#at);
    const set = union(sets);
    if (set.length === 0 && !negated) this.#fail(`the class "${text}" matches nothing`);
    const result = negated ? negate(set) : set;
    if (has(result, SLASH)) {
      this.#fail(
        `the class "${text}" matches "/", and a variable is one segment; leave "/" out` +
          (negated ? `, as in [^/${text.slice(2)}` : ""),
      );
    }
    return this.#chars(result, text);
  }

  /** The character after a `\`. */
  #escaped(): string {
    return this.#source[this.#at++] ?? this.#fail("the regex ends with a lone \\");
  }

  /** A character of a class (its code unit) or a class escape's set. */
  #classAtom(): number | CharSet {
    const start = this.#at;
    const c = this.#source[this.#at++];
    if (c === "[") this.#fail(`write \\[ for "[" in a class (at ${start})`);
    if (c !== "\\") return c.charCodeAt(0);
    const e = this.#escaped();
    const text = this.#source.slice(start, this.#at);
    if (e === "b") return this.#fail(`"\\b" in a class is not supported`);
    return this.#escapeSet(e, text) ?? e.charCodeAt(0);
  }

  /** `{n}`, `{n,}` or `{n,m}` at `at`, read without moving the cursor; else `undefined`. */
  #count(at: number): { min: number; max: number; length: number } | undefined {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.#source.slice(at));
    if (match === null) return undefined;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    return { min, max, length: match[0].length - 1 };
  }

  #quantified(atom: RegexNode, start: number): RegexNode {
    const c = this.#peek();
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const count = this.#count(this.#at) ?? this.#fail(noCount(this.#at));
      ({ min, max } = count);
      const text = this.#source.slice(this.#at, this.#at + count.length + 1);
      if (min > max) this.#fail(`the count ${text} is out of order`);
      if (Math.max(min, max === Infinity ? 0 : max) > MAX_EXPANDED_SIZE) {
        this.#fail(`the count ${text} is too large (at most ${MAX_EXPANDED_SIZE})`);
      }
      this.#at += count.length;
    } else return atom;
    this.#at++;
    const after = this.#peek();
    const text = this.#source.slice(start, this.#at);
    if (after === "?") this.#fail(`lazy quantifiers ("${text}?") are not supported`);
    if (after === "*" || after === "+" || (after === "{" && this.#count(this.#at))) {
      this.#fail(`"${after}" after "${text}" repeats a quantifier; group what it repeats`);
    }
    return { kind: "repeat", body: atom, min, max, text };
  }
}

function nullable(node: RegexNode): boolean {
  switch (node.kind) {
    case "chars":
      return false;
    case "sequence":
      return node.items.every(nullable);
    case "choice":
      return node.options.some(nullable);
    case "repeat":
      return node.min === 0 || nullable(node.body);
  }
}

/** How many characters the regex stands for with its counts written out. */
function expandedSize(node: RegexNode): number {
  switch (node.kind) {
    case "chars":
      return 1;
    case "sequence":
      return node.items.reduce((n, item) => n + expandedSize(item), 0);
    case "choice":
      return node.options.reduce((n, option) => n + expandedSize(option), 0);
    case "repeat":
      return expandedSize(node.body) * Math.max(1, node.max === Infinity ? node.min : node.max);
  }
}

/** A character of the written-out regex: a position in Glushkov's construction. */
interface Position {
  readonly set: CharSet;
  readonly text: string;
  /** Every way forward from it. */
  readonly follow: Next[];
}

/** A position that may come next, and the repetition that brings it back, if one does. */
interface Next {
  readonly position: Position;
  readonly loop?: string;
}

interface Glushkov {
  readonly nullable: boolean;
  readonly first: readonly Next[];
  readonly last: readonly Position[];
}

/**
 * Refuses what can make a backtracking engine slow, and a regex that matches an empty segment.
 * Counts are written out (`x{2,3}` is `x x (?:x)?`) and the positions of Glushkov's automaton
 * computed, keeping every way a position follows another (a position that follows through two
 * repetitions is listed twice): the expression is deterministic when no two ways forward from
 * the start, or from any position, share a character.
 */
export function checkRegexTree(tree: RegexNode): void {
  checkEmptyRepeats(tree);
  const size = expandedSize(tree);
  if (size > MAX_EXPANDED_SIZE) {
    throw new Error(
      `the regex stands for ${size} characters with its counts written out ` +
        `(at most ${MAX_EXPANDED_SIZE}); use smaller counts`,
    );
  }
  const { root, positions } = glushkov(tree);
  checkDeterministic(root.first, "at the start");
  for (const { follow, text } of positions) checkDeterministic(follow, `after "${text}"`);
  if (root.nullable) {
    throw new Error(
      "the regex matches an empty segment, which no request has; use + rather than *",
    );
  }
}

// A repetition of what can match nothing.
function checkEmptyRepeats(node: RegexNode): void {
  if (node.kind === "repeat") {
    if (nullable(node.body)) {
      throw new Error(
        `"${node.text}" repeats a part that can match nothing, which backtracks badly`,
      );
    }
    checkEmptyRepeats(node.body);
  } else if (node.kind === "sequence") node.items.forEach(checkEmptyRepeats);
  else if (node.kind === "choice") node.options.forEach(checkEmptyRepeats);
}

// Glushkov's automaton of a regex: its start, and its positions in the order built.
function glushkov(tree: RegexNode): { root: Glushkov; positions: Position[] } {
  const positions: Position[] = [];
  const build = (node: RegexNode): Glushkov => {
    switch (node.kind) {
      case "chars": {
        const position: Position = { set: node.set, text: node.text, follow: [] };
        positions.push(position);
        return { nullable: false, first: [{ position }], last: [position] };
      }
      case "sequence":
        return node.items.map(build).reduce(concat, EMPTY);
      case "choice": {
        const parts = node.options.map(build);
        return {
          nullable: parts.some((p) => p.nullable),
          first: parts.flatMap((p) => p.first),
          last: parts.flatMap((p) => p.last),
        };
      }
      case "repeat": {
        const copies: Glushkov[] = [];
        for (let i = 0; i < node.min; i++) copies.push(build(node.body));
        if (node.max === Infinity) {
          // `x{n,}`: the last required copy repeats; `x*` is an optional repeating copy.
          const looped = copies.pop() ?? build(node.body);
          for (const p of looped.last) {
            p.follow.push(...looped.first.map(({ position }) => ({ position, loop: node.text })));
          }
          copies.push({ ...looped, nullable: node.min === 0 });
          return copies.reduce(concat, EMPTY);
        }
        // `x{n,m}`: then `(?:x(?:x...)?)?`, m - n deep, as a greedy count backtracks.
        let optional: Glushkov = EMPTY;
        for (let i = node.min; i < node.max; i++) {
          optional = { ...concat(build(node.body), optional), nullable: true };
        }
        return [...copies, optional].reduce(concat, EMPTY);
      }
    }
  };
  const concat = (a: Glushkov, b: Glushkov): Glushkov => {
    for (const p of a.last) p.follow.push(...b.first);
    return {
      nullable: a.nullable && b.nullable,
      first: a.nullable ? [...a.first, ...b.first] : a.first,
      last: b.nullable ? [...b.last, ...a.last] : b.last,
    };
  };
  return { root: build(tree), positions };
}

// No two ways forward share a character.
function checkDeterministic(ways: readonly Next[], where: string): void {
  for (let i = 0; i < ways.length; i++) {
    for (let j = i + 1; j < ways.length; j++) {
      const a = ways[i];
      const b = ways[j];
      const unit = common(a.position.set, b.position.set);
      if (unit === undefined) continue;
      if (a.position === b.position && a.loop !== undefined && b.loop !== undefined) {
        const [inner, outer] = [a.loop, b.loop].sort((x, y) => x.length - y.length);
        throw new Error(
          `"${outer}" repeats "${inner}", and both can go on with ${show(unit)} ${where}, ` +
            "so the same text matches in many ways, which backtracks badly",
        );
      }
      throw new Error(
        `"${a.position.text}" and "${b.position.text}" can both match ${show(unit)} ${where}, ` +
          "so the regex is ambiguous and backtracks badly; write it so that each character " +
          "has one place to go",
      );
    }
  }
}

const EMPTY: Glushkov = { nullable: true, first: [], last: [] };

/** A code unit as a regex writes it: letters and digits as they are, the rest as `\uXXXX`. */
function unit(code: number): string {
  const c = String.fromCharCode(code);
  return ALPHANUMERIC.test(c) ? c : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * The regex JavaScript runs, written from the tree rather than copied: it means exactly what was
 * checked, and its groups capture nothing.
 */
function emit(node: RegexNode): string {
  switch (node.kind) {
    case "chars": {
      const [[lo, hi]] = node.set;
      if (node.set.length === 1 && lo === hi) return unit(lo);
      return `[${node.set.map(([a, b]) => a === b ? unit(a) : `${unit(a)}-${unit(b)}`).join("")}]`;
    }
    case "sequence":
      return node.items.map((item) => item.kind === "choice" ? `(?:${emit(item)})` : emit(item))
        .join("");
    case "choice":
      return node.options.map(emit).join("|");
    case "repeat": {
      const body = node.body.kind === "chars" ? emit(node.body) : `(?:${emit(node.body)})`;
      const { min, max } = node;
      const quantifier = max === Infinity
        ? (min === 0 ? "*" : min === 1 ? "+" : `{${min},}`)
        : min === 0 && max === 1
        ? "?"
        : min === max
        ? `{${min}}`
        : `{${min},${max}}`;
      return body + quantifier;
    }
  }
}
