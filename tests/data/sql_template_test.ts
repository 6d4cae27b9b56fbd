import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  fragment,
  identifier,
  join,
  renderSql,
  SqlFragment,
  SqlIdentifier,
} from "../../src/data/sql_template.ts";
import type { DatabaseKind } from "../../src/sql/datasource.ts";
import { DIALECTS as BY_KIND } from "../../src/sql/dialects.ts";
import { propertyOptions } from "../property.ts";
import { boundValue } from "./sql_arbitraries.ts";

const DIALECTS: readonly DatabaseKind[] = ["postgres", "mysql", "sqlite"];
const tag = (strings: TemplateStringsArray, ...values: unknown[]) => ({ strings, values });

// A model of a template: literal parts (no placeholder characters, so placeholders are countable),
// and between them a value, an identifier or a nested template.
type Part =
  | { kind: "value"; value: unknown }
  | { kind: "identifier"; name: string }
  | { kind: "fragment"; strings: string[]; parts: Part[] };

const literal = fc.string({ maxLength: 8 }).map((s) => s.replace(/[$?"`]/g, "_"));
const value = boundValue(
  fc.bigInt(),
  fc.constantFrom("'; DROP TABLE users; --", "$1", "?", '"', "`", "\\", "\0"),
);
const { part } = fc.letrec<{ part: Part; template: { strings: string[]; parts: Part[] } }>(
  (tie) => ({
    part: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      value.map((v): Part => ({ kind: "value", value: v })),
      fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !s.includes("\0")).map((
        name,
      ): Part => ({ kind: "identifier", name })),
      tie("template").map((t): Part => ({ kind: "fragment", ...t })),
    ),
    template: fc.array(tie("part"), { maxLength: 4 }).chain((parts) =>
      fc.array(literal, { minLength: parts.length + 1, maxLength: parts.length + 1 }).map((
        strings,
      ) => ({ strings, parts }))
    ),
  }),
);
const template = fc.array(part, { maxLength: 5 }).chain((parts) =>
  fc.array(literal, { minLength: parts.length + 1, maxLength: parts.length + 1 }).map((
    strings,
  ) => ({ strings, parts }))
);

function build(parts: Part[]): unknown[] {
  return parts.map((p) =>
    p.kind === "value"
      ? p.value
      : p.kind === "identifier"
      ? identifier(p.name)
      : new SqlFragment(p.strings, build(p.parts))
  );
}

/**
 * The model's expectation: the values in reading order, and the text with each in place; a
 * placeholder followed by a digit gets a space, or `$1` `0` would read as `$10` (`?1` on SQLite).
 */
function expected(
  dialect: DatabaseKind,
  strings: string[],
  parts: Part[],
): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const pieces: string[] = [];
  const walk = (strings: string[], parts: Part[]) => {
    pieces.push(strings[0]);
    parts.forEach((p, i) => {
      if (p.kind === "value") {
        params.push(p.value);
        pieces.push(dialect === "postgres" ? `$${params.length}` : "?");
      } else if (p.kind === "identifier") pieces.push(BY_KIND[dialect].quote(p.name));
      else walk(p.strings, p.parts);
      pieces.push(strings[i + 1]);
    });
  };
  walk(strings, parts);
  const text = pieces.filter((p) => p !== "").reduce(
    (text, piece) =>
      /(\$\d+|\?)$/.test(text) && /^\d/.test(piece) ? `${text} ${piece}` : text + piece,
    "",
  );
  return { text, params };
}

describe("sql_template", () => {
  it("binds every value as a parameter, in order, with one placeholder each", () => {
    fc.assert(
      fc.property(fc.constantFrom(...DIALECTS), template, (dialect, { strings, parts }) => {
        const rendered = renderSql(BY_KIND[dialect], strings, build(parts));
        const model = expected(dialect, strings, parts);
        assert.deepEqual(rendered.params, model.params);
        assert.equal(rendered.text, model.text);
        const placeholders = dialect === "postgres"
          ? rendered.text.match(/\$\d+/g) ?? []
          : rendered.text.match(/\?/g) ?? [];
        // Identifiers may hold `?` or `$1`: counted outside their quotes (each left a space, or
        // `$1"x"0` would read as `$10`).
        const unquoted = rendered.text.replace(/"(?:[^"]|"")*"|`(?:[^`]|``)*`/g, " ");
        const outside = dialect === "postgres"
          ? unquoted.match(/\$\d+/g) ?? []
          : unquoted.match(/\?/g) ?? [];
        assert.ok(placeholders.length >= outside.length);
        assert.equal(outside.length, rendered.params.length);
        if (dialect === "postgres") {
          assert.deepEqual(outside, rendered.params.map((_, i) => `$${i + 1}`));
        }
      }),
      propertyOptions(),
    );
  });

  it("never puts a value's text into the statement", () => {
    const marked = fc.string({ minLength: 1 }).map((s) => `\u2603${s}\u2603`);
    fc.assert(
      fc.property(
        fc.constantFrom(...DIALECTS),
        fc.array(marked, { minLength: 1, maxLength: 5 }),
        (dialect, values) => {
          const strings = ["SELECT ", ...values.slice(1).map(() => ", "), ""];
          const nested = new SqlFragment(["WHERE a = ", ""], [values[0]]);
          const rendered = renderSql(BY_KIND[dialect], [...strings, ""], [...values, nested]);
          assert.ok(!rendered.text.includes("\u2603"), rendered.text);
          assert.deepEqual(rendered.params, [...values, values[0]]);
        },
      ),
      propertyOptions(),
    );
  });

  it("numbers PostgreSQL placeholders across nested fragments", () => {
    const id = 7;
    const name = "x";
    const where = fragment`AND id = ${id}`;
    const { strings, values } = tag`SELECT * FROM t WHERE name = ${name} ${where} LIMIT ${1}`;
    assert.deepEqual(renderSql(BY_KIND.postgres, strings, values), {
      text: "SELECT * FROM t WHERE name = $1 AND id = $2 LIMIT $3",
      params: ["x", 7, 1],
    });
    assert.deepEqual(renderSql(BY_KIND.mysql, strings, values), {
      text: "SELECT * FROM t WHERE name = ? AND id = ? LIMIT ?",
      params: ["x", 7, 1],
    });
  });

  it("keeps a placeholder apart from a digit after it", () => {
    const { strings, values } = tag`SELECT ${"a"}0, ${fragment`${"b"}`}1`;
    assert.equal(renderSql(BY_KIND.postgres, strings, values).text, "SELECT $1 0, $2 1");
    assert.equal(renderSql(BY_KIND.sqlite, strings, values).text, "SELECT ? 0, ? 1");
  });

  it("quotes identifiers per dialect, doubling the quote inside", () => {
    const { strings, values } = tag`SELECT ${identifier('a"b`c')} FROM ${identifier("app", "t")}`;
    assert.equal(
      renderSql(BY_KIND.postgres, strings, values).text,
      'SELECT "a""b`c" FROM "app"."t"',
    );
    assert.equal(renderSql(BY_KIND.sqlite, strings, values).text, 'SELECT "a""b`c" FROM "app"."t"');
    assert.equal(renderSql(BY_KIND.mysql, strings, values).text, 'SELECT `a"b``c` FROM `app`.`t`');
    assert.deepEqual(renderSql(BY_KIND.mysql, strings, values).params, []);
  });

  it("refuses an empty identifier and one with NUL", () => {
    assert.throws(() => identifier(""), /non-empty string without NUL/);
    assert.throws(() => identifier("a\0b"), /non-empty string without NUL/);
    assert.throws(() => identifier("app", ""), /non-empty string without NUL/);
    assert.ok(identifier("ok") instanceof SqlIdentifier);
  });

  it("joins fragments and identifiers with a separator, a comma by default", () => {
    const columns = join([identifier("a"), identifier("b")]);
    const conditions = join([fragment`a = ${1}`, fragment`b = ${"two"}`], fragment` AND `);
    const { strings, values } = tag`SELECT ${columns} FROM t WHERE ${conditions}`;
    assert.deepEqual(renderSql(BY_KIND.postgres, strings, values), {
      text: 'SELECT "a", "b" FROM t WHERE a = $1 AND b = $2',
      params: [1, "two"],
    });
    assert.equal(
      renderSql(
        BY_KIND.sqlite,
        ...Object.values(tag`${join([])}`) as [
          string[],
          unknown[],
        ],
      ).text,
      "",
    );
  });

  it("refuses a plain value in a join and a string separator", () => {
    assert.throws(() => join(["a" as unknown as SqlFragment]), /fragments and identifiers/);
    assert.throws(
      () => join([fragment`a`], " OR " as unknown as SqlFragment),
      /separator must be a fragment/,
    );
  });
});
