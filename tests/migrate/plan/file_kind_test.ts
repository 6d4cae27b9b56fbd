import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { acceptsFile } from "../../../src/migrate/plan/file_kind.ts";
import { propertyOptions } from "../../property.ts";

const CODE_NAMES = [
  "V1__x.ts",
  "V1__x.js",
  "V3__backfill.ts",
  "V1.2__a_b.js",
  "V1_1__x.ts",
  "V001__x.js",
  "R__refresh.ts",
  "R__refresh.js",
  "V3__two.parts.ts",
  "U3__backfill.ts",
  "U1.2__a_b.js",
];

describe("acceptsFile", () => {
  for (const extension of [".sql", ".json"]) {
    it(`V, U and R code names with ${extension}: kept only by a driver that runs code`, () => {
      for (const name of CODE_NAMES) {
        assert.equal(acceptsFile(name, extension, true), true, name);
        assert.equal(acceptsFile(name, extension, false), false, name);
      }
    });
  }

  it("helpers, declarations, tests and names that only begin with V: never", () => {
    const others = [
      "lib/helper.ts",
      "helper.ts",
      "helper.js",
      "x.d.ts",
      "V1__x.d.ts",
      "R__x.d.ts",
      "helper_test.ts",
      "helper.test.js",
      "Vacation.ts",
      "Version.js",
      "Users.ts",
      "u1__x.ts",
      "Refresh.ts",
      "R_x.ts",
      "RV1__x.ts",
      "v1__x.ts",
      "r__x.js",
      "lib/V1__x.ts",
      "V1__x.tsx",
      "V1__x.mjs",
      "V1__x.cjs",
      "V1__x.mts",
      "V1__x.ts.bak",
      "V1__x.jsx",
      "V1__x.json.ts.orig",
    ];
    for (const name of others) {
      for (const code of [true, false]) {
        assert.equal(acceptsFile(name, ".sql", code), false, `${name} (code ${code})`);
      }
    }
  });

  it("code suffixes in lowercase only, as runtimes read them", () => {
    for (const name of ["V1__x.TS", "V1__x.Js", "R__x.JS", "V1__x.D.ts"]) {
      // `V1__x.D.ts` ends in `.ts` and is no `.d.ts`: a migration name like any other.
      const expected = name === "V1__x.D.ts";
      assert.equal(acceptsFile(name, ".sql", true), expected, name);
    }
  });

  it("the driver's own suffix, in any case, whatever the name and the code flag", () => {
    for (const code of [true, false]) {
      for (const name of ["001-notes.sql", "V1__x.SQL", "R__x.Sql", "helper.sQl", "a.b.sql"]) {
        assert.equal(acceptsFile(name, ".sql", code), true, name);
        assert.equal(acceptsFile(name, ".SQL", code), true, name);
      }
      for (const name of ["template.JSON", "V1__x.json", "lib/helper.Json"]) {
        assert.equal(acceptsFile(name, ".json", code), true, name);
      }
      for (const name of ["notes.sql.bak", "notes.sq", "notes", "x.json", "sql"]) {
        assert.equal(acceptsFile(name, ".sql", code), false, name);
      }
    }
  });

  it("a driver whose own suffix is a code suffix keeps every such file", () => {
    assert.equal(acceptsFile("helper.ts", ".ts", false), true);
    assert.equal(acceptsFile("helper.TS", ".ts", true), true);
  });
});

describe("acceptsFile: properties", () => {
  const word = fc.string({ unit: "grapheme-ascii", maxLength: 12 }).filter((s) => !s.includes("/"));
  const extension = fc.constantFrom(".sql", ".json", ".yml");
  // The suffix written in any case.
  const anyCase = (suffix: string) =>
    fc.array(fc.boolean(), { minLength: suffix.length, maxLength: suffix.length }).map((upper) =>
      [...suffix].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join("")
    );

  it("without code, exactly the names ending in the suffix, in any case", () => {
    fc.assert(
      fc.property(word, extension, (name, ext) => {
        assert.equal(acceptsFile(name, ext, false), name.toLowerCase().endsWith(ext));
      }),
      propertyOptions(200),
    );
  });

  it("a name ending in the suffix in any case is kept, with code or without", () => {
    fc.assert(
      fc.property(
        word,
        extension.chain((ext) => anyCase(ext)),
        fc.boolean(),
        (name, suffix, code) => {
          assert.equal(acceptsFile(`${name}${suffix}`, suffix.toLowerCase(), code), true);
          assert.equal(acceptsFile(`${name}${suffix.toLowerCase()}`, suffix, code), true);
        },
      ),
      propertyOptions(200),
    );
  });

  it("code adds only V<version>__ and R__ names ending in .ts or .js, never .d.ts", () => {
    fc.assert(
      fc.property(word, extension, (name, ext) => {
        const withCode = acceptsFile(name, ext, true);
        const without = acceptsFile(name, ext, false);
        // A superset.
        if (without) assert.equal(withCode, true);
        if (withCode && !without) {
          assert.match(name, /^(V[\d._]|R__).*\.(ts|js)$/);
          assert.doesNotMatch(name, /\.d\.ts$/);
        }
      }),
      propertyOptions(200),
    );
  });

  it("every Flyway name of a code file is kept with code, and none of its .d.ts", () => {
    const version = fc.array(fc.nat({ max: 999 }), { minLength: 1, maxLength: 3 })
      .map((parts) => parts.join("."));
    const name = fc.oneof(
      fc.tuple(version, word).map(([v, d]) => `V${v}__${d}`),
      word.map((d) => `R__${d}`),
    );
    fc.assert(
      fc.property(name, fc.constantFrom(".ts", ".js"), extension, (base, suffix, ext) => {
        // `R__.d` + `.ts` is a type declaration: no migration.
        const declaration = `${base}${suffix}`.endsWith(".d.ts");
        assert.equal(acceptsFile(`${base}${suffix}`, ext, true), !declaration, base + suffix);
        assert.equal(acceptsFile(`${base}${suffix}`, ext, false), false, base + suffix);
        assert.equal(acceptsFile(`${base}.d.ts`, ext, true), false, `${base}.d.ts`);
      }),
      { ...propertyOptions(200), examples: [["R__.d", ".ts", ".sql"]] },
    );
  });
});
