import { parsePathRegex } from "../../src/web/path_regex.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  joinPaths,
  parsePathPattern,
  removeDotSegments,
  restOfPath,
} from "../../src/web/path_pattern.ts";
import { propertyOptions } from "../property.ts";

// Every path parsed as an app with regexes in its paths parses it.
const parsePattern = (source: string) => parsePathPattern(source, parsePathRegex);

// RFC 3986, 5.2.4, step by step as the RFC writes it: the model the function is held to. (Node
// 20's own URL parser is no oracle: it leaves `/a/.e/.` as it is.)
function rfc3986RemoveDotSegments(path: string): string {
  let input = path;
  let output = "";
  const popLast = () => (output = output.slice(0, Math.max(0, output.lastIndexOf("/"))));
  while (input.length > 0) {
    if (input.startsWith("../")) input = input.slice(3);
    else if (input.startsWith("./")) input = input.slice(2);
    else if (input.startsWith("/./")) input = "/" + input.slice(3);
    else if (input === "/.") input = "/";
    else if (input.startsWith("/../")) {
      input = "/" + input.slice(4);
      popLast();
    } else if (input === "/..") {
      input = "/";
      popLast();
    } else if (input === "." || input === "..") input = "";
    else {
      const segment = /^\/?[^/]*/.exec(input)![0];
      output += segment;
      input = input.slice(segment.length);
    }
  }
  return output;
}

describe("removeDotSegments", () => {
  it("resolves . and .. as RFC 3986 (5.2.4) does (property)", () => {
    const path = fc.array(fc.constantFrom("a", "b", ".", "..", "", "c.d", ".e"), { maxLength: 8 })
      .map((parts) => "/" + parts.join("/"));
    fc.assert(
      fc.property(path, (p) => {
        assert.equal(removeDotSegments(p), rfc3986RemoveDotSegments(p), p);
      }),
      propertyOptions(500),
    );
  });

  it("never climbs above the root", () => {
    assert.equal(removeDotSegments("/../../etc/passwd"), "/etc/passwd");
    assert.equal(removeDotSegments("/x/../health"), "/health");
    assert.equal(removeDotSegments("/x/.."), "/");
    assert.equal(removeDotSegments("/a/./b/"), "/a/b/");
  });
});

describe("parsePathPattern", () => {
  it("keeps every literal and names every variable (property)", () => {
    const segment = fc.oneof(
      fc.stringMatching(/^[a-z0-9_.~-]{1,6}$/).filter((s) => s !== "." && s !== ".."),
      fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/).map((name) => `{${name}}`),
      fc.tuple(
        fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/),
        fc.constantFrom("\\d+", "[a-f0-9]{24}", "[^/.]+", "(json|xml)", "\\d{2,4}"),
      ).map(([name, regex]) => `{${name}:${regex}}`),
    );
    const nameOf = (p: string) => p.slice(1, p.includes(":") ? p.indexOf(":") : -1);
    fc.assert(
      fc.property(
        fc.uniqueArray(segment, {
          maxLength: 6,
          selector: (p) => p.startsWith("{") ? nameOf(p) : p,
        }),
        fc.option(fc.constant("{*rest}")),
        (parts, rest) => {
          const all = rest === null ? parts : [...parts, rest];
          const source = "/" + all.join("/");
          const pattern = parsePattern(source);
          assert.equal(pattern.segments.length, all.length);
          assert.deepEqual(pattern.variables, [
            ...parts.filter((p) => p.startsWith("{")).map(nameOf),
            ...(rest === null ? [] : ["rest"]),
          ]);
          assert.equal(pattern.rest, rest === null ? undefined : "rest");
          assert.equal(
            pattern.honoPath,
            "/" +
              [
                ...parts.map((p) => p.startsWith("{") ? `:${nameOf(p)}` : p),
                ...(rest === null ? [] : ["*"]),
              ].join("/"),
          );
          // Renaming the variables keeps the shape; dropping a regex changes it.
          const renamed = source.replace(/\{(\*?)([a-z][a-z0-9]*)/g, "{$1q$2");
          assert.equal(parsePattern(renamed).shape, pattern.shape);
          const plain = source.replace(/\{([a-z][a-z0-9]*):.*?\}(?=\/|$)/g, "{$1}");
          assert.equal(parsePattern(plain).shape === pattern.shape, plain === source);
        },
      ),
      propertyOptions(300),
    );
  });

  it("writes the root as '/' in every form", () => {
    const { template, honoPath, shape, segments } = parsePattern("/");
    assert.deepEqual([template, honoPath, shape, segments], ["/", "/", "/", []]);
  });

  it("reads a regex to its closing brace, braces nested, a '/' inside it included", () => {
    const pattern = parsePattern("/y/{year:\\d{4}}/{slug:[^/.]+}");
    assert.deepEqual(pattern.segments.map((s) => s.kind), ["literal", "variable", "variable"]);
    assert.deepEqual(
      pattern.segments.map((s) => s.kind === "variable" ? s.constraint?.source : undefined),
      [undefined, "\\d{4}", "[^/.]+"],
    );
    assert.equal(pattern.honoPath, "/y/:year/:slug");
    assert.equal(pattern.shape, "/y/{:\\d{4}}/{:[^/.]+}");
    assert.equal(parsePattern("/{*path}").honoPath, "/*");
    assert.equal(parsePattern("/files/{*path}").shape, "/files/{*}");
  });

  it("takes an escaped brace in a regex as the character, as the regex's own error says", () => {
    for (
      const [source, matches, not] of [
        ["/x/{x:v\\}}", "v}", "v"],
        ["/x/{x:a\\{}", "a{", "a"],
        ["/x/{x:\\{\\d+\\}}", "{42}", "42"],
        ["/x/{x:[a-z]\\}{2}}/y", "a}}", "a}"],
      ]
    ) {
      const pattern = parsePattern(source);
      const [, variable] = pattern.segments;
      assert.equal(variable.kind, "variable", source);
      const regex = (variable as { constraint: { regex: RegExp } }).constraint.regex;
      assert.ok(regex.test(matches), `${source}: ${matches}`);
      assert.ok(!regex.test(not), `${source}: ${not}`);
    }
    // Outside braces, a "\\" escapes nothing: it is refused as any reserved character.
    assert.throws(() => parsePattern("/a\\}"), /"\}" at 3 closes no "\{"/);
  });

  it("refuses what is not a pattern, saying why", () => {
    const bad: [string, RegExp][] = [
      ["/a/*", /"\*" is not supported; write \{name\} for one segment, or \{\*name\} as the last/],
      ["/a/**", /"\*\*" is not supported/],
      ["/a/{*rest}/b", /\{\*rest\} takes the rest of the path, so it must be the last segment/],
      ["/a/{*rest:\\d+}", /\{\*rest\} takes the rest of the path, with no regex/],
      ["/a/x{id}", /segment "x\{id\}" is neither plain text nor a whole \{name\} variable/],
      ["/a/{a}{b}", /neither plain text nor a whole \{name\} variable/],
      ["/a/{id:\\d+}x", /a variable, \{name\}, \{name:regex\} or \{\*name\}, is a whole segment/],
      ["/a/{1d}", /neither plain text/],
      ["/a/{id:}", /the regex of \{id\}: the regex is empty/],
      [
        "/a/{id:(a+)+}",
        /^path "\/a\/\{id:\(a\+\)\+\}": the regex of \{id\}: "\(a\+\)\+" repeats "a\+"/,
      ],
      ["/a/{id:.+}", /the regex of \{id\}: "\." matches any character/],
      ["/a/{id:\\d{2}", /a "\{" is not closed/],
      ["/a}/b", /"\}" at 2 closes no "\{"/],
      ["/a/{x}/{*x}", /names \{x\} twice/],
      // Express's syntax, with the pattern to write instead.
      ["/todos/:id", /segment ":id" is Express's syntax; write \{id\} \(a variable is in braces/],
      ["/todos/:id(\\d+)/x", /segment ":id\(\\d\+\)" is Express's syntax; write \{id:\\d\+\}/],
      ["/a/:1", /neither plain text/],
    ];
    for (const [source, why] of bad) {
      assert.throws(() => parsePattern(source), (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.match(e.message, why, source);
        return true;
      }, source);
    }
  });

  it("joins a prefix and a path at one slash", () => {
    assert.equal(joinPaths("/api/", "/users"), "/api/users");
    assert.equal(joinPaths("api", "users/"), "/api/users");
    assert.equal(joinPaths("", ""), "/");
    assert.equal(joinPaths("/files", "/{*path}"), "/files/{*path}");
  });
});

describe("restOfPath", () => {
  it("is what follows the first segments, its leading '/' kept, as Spring has it", () => {
    const cases: [string, number, string][] = [
      ["/files", 1, ""],
      ["/files/", 1, "/"],
      ["/files/a/b.png", 1, "/a/b.png"],
      ["/files//a", 1, "//a"],
      ["/", 0, "/"],
      ["/a/b", 0, "/a/b"],
      ["/u/7/x", 2, "/x"],
      ["/u/7", 2, ""],
    ];
    for (const [path, segments, rest] of cases) {
      assert.equal(restOfPath(path, segments), rest, `${path} after ${segments}`);
    }
  });
});
