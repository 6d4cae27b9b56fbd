import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkRegexTree,
  parsePathRegex,
  parseRegexTree,
  type RegexNode,
} from "../../src/web/path_regex.ts";
import { propertyOptions } from "../property.ts";

// What each is: [regex, a segment it matches, one it does not].
const ACCEPTED: [string, string, string][] = [
  ["\\d+", "2024", "20a"],
  ["[0-9]+", "7", ""],
  ["[a-f0-9]{24}", "507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901"],
  ["\\d{4}-\\d{2}-\\d{2}", "2024-02-29", "2024-2-29"],
  ["v\\d+", "v2", "v"],
  ["(json|xml)", "xml", "yaml"],
  ["[A-Za-z0-9_-]+", "a_B-9", "a.b"],
  ["[a-z]+(?:-[a-z]+)*", "spring-boot-app", "spring--boot"],
  ["\\d{2,4}", "123", "12345"],
  ["[^/.]+", "a;b=c", "a.b"],
  ["a\\.b", "a.b", "axb"],
  ["(?:ab)+c", "ababc", "abac"],
  ["[a\\-z]", "-", "b"],
  ["\\w+(?:\\.\\w+)?", "file.txt", "file."],
];

// Each refused regex and the reason it is given.
const REFUSED: [string, RegExp][] = [
  ["", /the regex is empty; write \{name\} for any segment/],
  [".+", /"\." matches any character, "\/" included; use a class that leaves "\/" out/],
  ["\\D+", /"\\D" matches "\/", and a variable is one segment; use \[\^\/0-9\]/],
  ["\\W", /"\\W" matches "\/"/],
  ["\\S+", /"\\S" matches "\/"/],
  ["[^a]+", /the class "\[\^a\]" matches "\/".*as in \[\^\/a\]/],
  ["[^]", /the class "\[\^\]" matches "\/"/],
  ["[]", /the class "\[\]" matches nothing/],
  ["a/b", /a variable is one segment: its regex cannot match "\/"/],
  ["[+-0]", /the class "\[\+-0\]" matches "\/"/],
  ["^\\d+", /anchors \("\^"\) are not needed/],
  ["\\d+$", /anchors \("\$"\) are not needed/],
  ["\\bx", /word boundaries \("\\b"\) are not supported/],
  ["(a)\\1", /back-references \("\\1"\) are not supported/],
  ["(?=a)a", /lookarounds \("\(\?="\) are not supported/],
  ["(?<!a)b", /lookarounds \("\(\?<"\) are not supported/],
  ["(?<n>a)", /named groups \("\(\?<"\) are not supported; use \(\?:\.\.\.\)/],
  ["(?i:a)", /"\(\?i" is not supported/],
  ["a+?", /lazy quantifiers \("a\+\?"\) are not supported/],
  ["a{2}?", /lazy quantifiers/],
  ["a**", /"\*" after "a\*" repeats a quantifier/],
  ["*a", /"\*" at 0 repeats nothing/],
  ["a{,3}", /"\{" at 1 starts no count \{n\}, \{n,\} or \{n,m\}; write \\\{/],
  ["{3}a", /"\{" at 0 repeats nothing/],
  ["{x}", /"\{" at 0 starts no count \{n\}/],
  ["a{2}{3}", /"\{" after "a\{2\}" repeats a quantifier/],
  ["a{2}{x", /"\{" at 4 starts no count \{n\}/],
  ["a{3,2}", /the count \{3,2\} is out of order/],
  ["[z-a]", /the range "z-a" is out of order/],
  ["[a-c-e]", /"-" after the range "a-c" is ambiguous; write \\-/],
  ["[\\d-z]", /the range "\\d-z" needs one character at each end/],
  ["[[:alpha:]]", /write \\\[ for "\[" in a class/],
  ["\\n", /"\\n" is not supported: escapes are \\d, \\w, \\s and \\ before punctuation/],
  ["a}", /write \\\} for the character "\}"/],
  ["(a", /the group opened at 0 is not closed/],
  ["a)", /"\)" at 1 closes no group/],
  ["[ab", /the class opened at 0 is not closed/],
  ["a\\", /ends with a lone \\/],
  ["[a\\", /ends with a lone \\/],
  ["a*", /matches an empty segment, which no request has; use \+ rather than \*/],
  ["(a|)", /matches an empty segment/],
  ["(a+)+", /"\(a\+\)\+" repeats "a\+", and both can go on with "a" after "a"/],
  ["(a*)*", /"\(a\*\)\*" repeats a part that can match nothing, which backtracks badly/],
  ["(?:a?){3,}", /"\(\?:a\?\)\{3,\}" repeats a part that can match nothing/],
  ["x\\d*\\d*", /"\\d" and "\\d" can both match "0" after "x", so the regex is ambiguous/],
  ["\\d*\\d*", /"\\d" and "\\d" can both match "0" at the start/],
  ["(a|a)+", /"a" and "a" can both match "a" at the start/],
  ["(a|ab)+", /"a" and "a" can both match "a" at the start/],
  ["\\w+\\d", /"\\w" and "\\d" can both match "0" after "\\w"/],
  ["(?:a+b?)+", /repeats "a\+", and both can go on with "a"/],
  ["\\d{1,3}\\d", /"\\d" and "\\d" can both match "0" after "\\d"/],
  ["a{1,100000}", /the count \{1,100000\} is too large \(at most 1000\)/],
  ["[a-z]{1,600}[0-9]{1,600}", /stands for 1200 characters with its counts written out/],
];

describe("parsePathRegex", () => {
  it("takes the subset, each regex matching a whole segment as JavaScript would", () => {
    for (const [source, yes, no] of ACCEPTED) {
      const { regex } = parsePathRegex(source);
      const native = new RegExp(`^(?:${source})$`);
      assert.ok(regex.test(yes), `${source} on ${yes}`);
      assert.ok(native.test(yes), `${source} on ${yes} (JavaScript)`);
      assert.equal(regex.test(no), false, `${source} on ${no}`);
      assert.equal(native.test(no), false, `${source} on ${no} (JavaScript)`);
    }
  });

  it("refuses the rest, saying why", () => {
    for (const [source, why] of REFUSED) {
      assert.throws(() => parsePathRegex(source), (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.match(e.message, why, source);
        return true;
      }, source);
    }
  });

  it("captures nothing: a group is written as (?:...)", () => {
    const { regex } = parsePathRegex("(json|xml)");
    assert.equal(new RegExp(`${regex.source}|`).exec("")!.length, 1);
  });
});

// Small regexes from the subset and from just outside it (`.`, `\D`, `[^a]`, `/`, `^`), groups
// nested a few deep and repeated often: the checker decides which are accepted, and the properties
// hold of every accepted one.
const regexArb: fc.Arbitrary<string> = fc.letrec<{ alt: string; seq: string; atom: string }>(
  (tie) => ({
    atom: fc.oneof(
      { maxDepth: 3, depthSize: "small", withCrossShrink: true },
      {
        weight: 8,
        arbitrary: fc.constantFrom(
          "a",
          "b",
          "0",
          "-",
          "_",
          "\\.",
          "\\d",
          "\\w",
          "\\s",
          "[ab]",
          "[a-c]",
          "[0-9a]",
          "[^/a]",
          "[^/]",
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom(".", "\\D", "[^a]", "/", "^") },
      { weight: 3, arbitrary: tie("alt").map((r) => `(${r})`) },
      { weight: 3, arbitrary: tie("alt").map((r) => `(?:${r})`) },
    ),
    seq: fc.array(
      fc.tuple(
        tie("atom"),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant("") },
          { weight: 3, arbitrary: fc.constant("+") },
          { weight: 4, arbitrary: fc.constantFrom("*", "?", "{2}", "{1,3}", "{2,}", "{0,2}") },
        ),
      ).map(([atom, q]) => atom + q),
      { minLength: 1, maxLength: 3 },
    ).map((items) => items.join("")),
    alt: fc.oneof(
      { weight: 3, arbitrary: tie("seq") },
      { weight: 1, arbitrary: fc.tuple(tie("seq"), tie("seq")).map(([a, b]) => `${a}|${b}`) },
    ),
  }),
).alt;

function accepted(source: string): boolean {
  try {
    parsePathRegex(source);
    return true;
  } catch {
    return false;
  }
}

// Code units each character set of the tree holds, at its ends and middle: strings made of them
// walk the regex's own paths.
function alphabet(tree: RegexNode, into: Set<string> = new Set()): Set<string> {
  switch (tree.kind) {
    case "chars":
      for (const [lo, hi] of tree.set.slice(0, 3)) {
        for (const unit of [lo, hi, (lo + hi) >> 1]) into.add(String.fromCharCode(unit));
      }
      break;
    case "sequence":
      tree.items.forEach((item) => alphabet(item, into));
      break;
    case "choice":
      tree.options.forEach((option) => alphabet(option, into));
      break;
    case "repeat":
      alphabet(tree.body, into);
  }
  return into;
}

describe("accepted regexes (property)", () => {
  it("never match an empty segment or one with '/', and mean what JavaScript reads", () => {
    let taken = 0;
    fc.assert(
      fc.property(
        regexArb.chain((source) => {
          if (!accepted(source)) return fc.constant({ source, probes: [] as string[] });
          const native = new RegExp(`^(?:${source})$`);
          const chars = [...alphabet(parseRegexTree(source)), "/", "!"];
          const matching = fc.stringMatching(native);
          return fc.record({
            source: fc.constant(source),
            probes: fc.array(
              fc.oneof(
                matching,
                // A matching segment with a `/` put in it.
                fc.tuple(matching, fc.nat(), fc.constantFrom("/", "a/", "/0"))
                  .map(([s, at, slash]) =>
                    s.slice(0, at % (s.length + 1)) + slash + s.slice(at % (s.length + 1))
                  ),
                fc.array(fc.constantFrom(...chars), { maxLength: 12 }).map((c) => c.join("")),
              ),
              { minLength: 1, maxLength: 12 },
            ),
          });
        }),
        ({ source, probes }) => {
          if (probes.length === 0) return;
          taken++;
          const native = new RegExp(`^(?:${source})$`);
          const { regex } = parsePathRegex(source);
          assert.equal(native.test(""), false, `${source} matches ""`);
          for (const probe of probes) {
            const yes = native.test(probe);
            assert.equal(regex.test(probe), yes, `${source} on ${JSON.stringify(probe)}`);
            if (probe.includes("/")) assert.equal(yes, false, `${source} matches ${probe}`);
          }
        },
      ),
      propertyOptions(300),
    );
    // The generator reaches the subset, not only its refusals.
    assert.ok(taken > 0, "no generated regex was accepted");
  });

  it("match in steps linear in the segment's length (a counting backtracker)", () => {
    fc.assert(
      fc.property(
        regexArb.filter(accepted).chain((source) => {
          const tree = parseRegexTree(source);
          const chars = [...alphabet(tree), "/", "!"];
          const matching = fc.stringMatching(new RegExp(`^(?:${source})$`));
          return fc.record({
            tree: fc.constant(tree),
            source: fc.constant(source),
            probes: fc.array(
              fc.oneof(
                fc.array(fc.constantFrom(...chars), { maxLength: 60 }).map((c) => c.join("")),
                // Pumped: matching segments end to end, then a character that fails. At most
                // PUMPED characters before it: the counter recurses once per character, and a
                // regex such as `(?:(?:a{2,}0{2,}){2,}_+){2,}` pumps thousands, past Node 20's
                // stack; a few hundred already tell linear from polynomial steps.
                fc.tuple(
                  fc.array(matching, { minLength: 1, maxLength: 6 }),
                  fc.constantFrom(...chars),
                )
                  .map(([parts, end]) => parts.join("").slice(0, PUMPED) + end),
              ),
              { minLength: 1, maxLength: 8 },
            ),
          });
        }),
        ({ tree, source, probes }) => {
          const native = new RegExp(`^(?:${source})$`);
          for (const probe of probes) {
            const bound = LINEAR * (probe.length + 1) * size(tree);
            const { matched, steps } = backtrack(tree, probe, bound);
            assert.ok(
              steps <= bound,
              `${source} on ${JSON.stringify(probe)}: more than ${bound} steps`,
            );
            // The counter is a faithful backtracker: it agrees with JavaScript.
            assert.equal(matched, native.test(probe), `${source} on ${JSON.stringify(probe)}`);
          }
        },
      ),
      propertyOptions(200),
    );
  });

  it("the bound has teeth: refused regexes break it on their own characters", () => {
    for (
      const [source, probe] of [
        ["(a+)+", "a".repeat(18) + "!"],
        ["(?:a|a)+", "a".repeat(18) + "!"],
        ["\\d*\\d*\\d*x", "1".repeat(60)],
        ["(?:a|aa)+", "a".repeat(24) + "!"],
      ]
    ) {
      const tree = parseRegexTree(source);
      assert.throws(() => checkRegexTree(tree), source);
      const bound = LINEAR * (probe.length + 1) * size(tree);
      const { steps } = backtrack(tree, probe, bound);
      assert.ok(steps > bound, `${source}: only ${steps} steps`);
    }
  });
});

/**
 * The constant of the linear bound. A deterministic regex whose repeated parts cannot match
 * nothing leaves a backtracking engine at most one way forward at each character: a way that
 * fails does so before taking one, so each (character, pattern element) pair is tried a bounded
 * number of times. Over thousands of generated regexes and segments the counter below takes at
 * most one step per (character, element); 4 leaves room, and the refused regexes go far past it.
 */
const LINEAR = 4;
const PUMPED = 240;

/** The pattern elements the counter can visit: counts written out, as the checker does. */
function size(node: RegexNode): number {
  switch (node.kind) {
    case "chars":
      return 1;
    case "sequence":
      return 1 + node.items.reduce((n, item) => n + size(item), 0);
    case "choice":
      return 1 + node.options.reduce((n, option) => n + size(option), 0);
    case "repeat":
      return 1 + (1 + size(node.body)) *
          Math.max(1, node.max === Infinity ? node.min + 1 : node.max);
  }
}

/**
 * A backtracking matcher over the tree as JavaScript's engine runs a regex (greedy counts, the
 * first alternative first, anchored at both ends), counting each element it enters. It gives up
 * past `limit` steps (a regex that backtracks badly would run for ever).
 */
function backtrack(
  tree: RegexNode,
  input: string,
  limit: number,
): { matched: boolean; steps: number } {
  let steps = 0;
  const match = (node: RegexNode, at: number, next: (at: number) => boolean): boolean => {
    if (++steps > limit) throw OVER;
    switch (node.kind) {
      case "chars": {
        const unit = input.charCodeAt(at);
        return at < input.length && node.set.some(([lo, hi]) => lo <= unit && unit <= hi) &&
          next(at + 1);
      }
      case "sequence": {
        const from = (i: number, here: number): boolean =>
          i === node.items.length
            ? next(here)
            : match(node.items[i], here, (to) => from(i + 1, to));
        return from(0, at);
      }
      case "choice":
        return node.options.some((option) => match(option, at, next));
      case "repeat": {
        const { body, min, max } = node;
        const loop = (count: number, here: number): boolean => {
          if (++steps > limit) throw OVER;
          if (count < max && match(body, here, (to) => to !== here && loop(count + 1, to))) {
            return true;
          }
          return count >= min && next(here);
        };
        return loop(0, at);
      }
    }
  };
  try {
    return { matched: match(tree, 0, (at) => at === input.length), steps };
  } catch (error) {
    if (error !== OVER) throw error;
    return { matched: false, steps };
  }
}

const OVER = Symbol("over the limit");
