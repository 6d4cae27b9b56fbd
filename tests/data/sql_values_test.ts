import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SqlClient } from "../../src/data/sql_client.ts";
import { renderSql, SqlFragment } from "../../src/data/sql_template.ts";
import type { DatabaseKind } from "../../src/sql/datasource.ts";
import { DIALECTS as BY_KIND } from "../../src/sql/dialects.ts";
import type { DataPool } from "../../src/sql/data_pool.ts";
import { valuesOf } from "../../src/data/sql_values.ts";
import { propertyOptions } from "../property.ts";
import { boundValue } from "./sql_arbitraries.ts";

const DIALECTS: readonly DatabaseKind[] = ["postgres", "mysql", "sqlite"];

// A client whose pool is never used: values() only renders.
function client(kind: DatabaseKind): SqlClient {
  return new SqlClient({ name: "main", kind } as unknown as DataPool);
}

const value = boundValue(fc.constantFrom("'; DROP TABLE t; --", "$1", "?", "), (", "\0"));
const column = fc.string({ minLength: 1, maxLength: 6 });
const table = fc.uniqueArray(column, { minLength: 1, maxLength: 5 }).chain((columns) =>
  fc.record({
    columns: fc.constant(columns),
    rows: fc.array(
      fc.tuple(...columns.map(() => value)).map((cells) =>
        Object.fromEntries(columns.map((c, i) => [c, cells[i]]))
      ),
      { minLength: 1, maxLength: 20 },
    ),
  })
);

describe("SqlClient.values: rows as one VALUES list", () => {
  it("renders rows x columns placeholders in order, the rows' values bound in that order", () => {
    fc.assert(
      fc.property(fc.constantFrom(...DIALECTS), table, value, (dialect, t, before) => {
        const { columns, rows } = t;
        // A value before the list: its placeholders go on numbering from the one before.
        const strings = ["INSERT INTO t SELECT ", " WHERE 1 = 0 UNION ALL VALUES ", ""];
        const { text, params } = renderSql(BY_KIND[dialect], strings, [
          before,
          client(dialect).values(rows, ...columns),
        ]);
        let n = 1;
        const mark = () => dialect === "postgres" ? `$${++n}` : "?";
        const groups = rows.map(() => `(${columns.map(mark).join(", ")})`).join(", ");
        assert.equal(
          text,
          `INSERT INTO t SELECT ${dialect === "postgres" ? "$1" : "?"} WHERE 1 = 0 UNION ALL ` +
            `VALUES ${groups}`,
        );
        assert.deepEqual(params, [before, ...rows.flatMap((row) => columns.map((c) => row[c]))]);
        // The static form renders the same.
        assert.deepEqual(
          renderSql(BY_KIND[dialect], strings, [before, SqlClient.values(rows, ...columns)]),
          { text, params },
        );
      }),
      propertyOptions(),
    );
  });

  // The statement names its own column list, which the rows' key order need not follow: taking
  // `{ name, id }` rows into `(id, name)` would swap every value without an error.
  it("refuses rows with no column named, saying to name them in the column list's order", () => {
    const rows = [{ b: 1, a: "x" }, { a: "y", b: 2, c: true }];
    for (const values of [client("postgres").values.bind(client("postgres")), SqlClient.values]) {
      assert.throws(() => values(rows), {
        name: "TypeError",
        message:
          /values\(\): name the columns to take, in the order of the statement's column list/,
      });
    }
    const sql = client("postgres");
    const { text, params } = renderSql(BY_KIND.postgres, ["VALUES ", ""], [
      sql.values(rows, "b", "a"),
    ]);
    assert.equal(text, "VALUES ($1, $2), ($3, $4)");
    assert.deepEqual(params, [1, "x", 2, "y"]);
    // Columns given as an array, as postgres.js takes them too.
    assert.throws(() => client("mysql").values(rows, ["a", "c"]), /rows\[0\] has no column "c"/);
    const listed = renderSql(BY_KIND.mysql, ["VALUES ", ""], [
      client("mysql").values(rows, ["b"], "a"),
    ]);
    assert.deepEqual(listed, { text: "VALUES (?, ?), (?, ?)", params: [1, "x", 2, "y"] });
  });

  it("refuses what cannot make a list, naming the row and the column", () => {
    const sql = client("sqlite");
    assert.throws(() => sql.values([], "a"), {
      name: "TypeError",
      message: /^datasource "main": values\(\) needs at least one row/,
    });
    assert.throws(() => sql.values("ab" as unknown as object[], "a"), {
      name: "TypeError",
      message: /^datasource "main": values\(\) takes an array of rows/,
    });
    for (
      const [bad, said] of [
        ["x", "a string"],
        [null, "null"],
        [[1, 2], "an array"],
        [7, "a number"],
      ] as const
    ) {
      assert.throws(() => sql.values([{ a: 1 }, bad as unknown as object], "a"), {
        name: "TypeError",
        message: new RegExp(
          `^datasource "main": values\\(\\): rows\\[1\\] is ${said}, not an object`,
        ),
      });
    }
    assert.throws(() => sql.values([{ a: 1, b: 2 }, { a: 3 }], "a", "b"), {
      name: "TypeError",
      message: /^datasource "main": values\(\): rows\[1\] has no column "b"/,
    });
    // A key set to undefined is there (NULL), as is a getter of the row's class.
    class Point {
      get x(): number {
        return 3;
      }
    }
    assert.deepEqual(
      renderSql(BY_KIND.sqlite, ["", ""], [sql.values([{ x: undefined }, new Point()], "x")])
        .params,
      [undefined, 3],
    );
    assert.throws(() => sql.values([{ a: 1 }], ""), {
      name: "TypeError",
      message: /values\(\): column names are non-empty strings/,
    });
    // A value the database cannot bind: the row, the column, and what is wrong.
    assert.throws(() => sql.values([{ a: 1, b: 2 }, { a: 3, b: () => 4 }], "a", "b"), {
      name: "TypeError",
      message: /^datasource "main": values\(\): rows\[1\], column "b", is a function/,
    });
    // A plain object: SQLite cannot bind it, PostgreSQL binds it as JSON.
    assert.throws(() => sql.values([{ a: { x: 1 } }], "a"), {
      name: "TypeError",
      message: /rows\[0\], column "a", is a plain object, which SQLite cannot bind/,
    });
    assert.ok(client("postgres").values([{ a: { x: 1 } }], "a"));
    // Without a database, what none binds.
    assert.throws(() => SqlClient.values([{ a: Number.NaN }], "a"), {
      name: "TypeError",
      message: /^values\(\): rows\[0\], column "a", is NaN/,
    });
    assert.ok(SqlClient.values([{ a: { x: 1 } }], "a"));
  });

  it("a column the row lacks is missing, though Object.prototype has it (__proto__)", () => {
    // On Node and Bun, row.__proto__ is Object.prototype: bound, it would store "{}" as JSON.
    for (const kind of ["postgres", "mysql"] as const) {
      assert.throws(() => client(kind).values([{ a: 1 }], "a", "__proto__"), {
        name: "TypeError",
        message: /^datasource "main": values\(\): rows\[0\] has no column "__proto__"/,
      });
    }
    assert.throws(() => SqlClient.values([{ a: 1 }], "a", "__proto__"), {
      name: "TypeError",
      message: /^values\(\): rows\[0\] has no column "__proto__"/,
    });
    // A key of its own by that name (JSON.parse makes one) is a column.
    const own = JSON.parse('{"a": 1, "__proto__": "p"}') as object;
    assert.deepEqual(
      renderSql(BY_KIND.postgres, ["", ""], [client("postgres").values([own], "a", "__proto__")])
        .params,
      [
        1,
        "p",
      ],
    );
  });

  it("refuses more parameters than the database binds in one statement, saying to split", () => {
    for (const kind of DIALECTS) {
      const limit = BY_KIND[kind].maxParameters;
      const fits = Array.from({ length: limit }, (_, i) => ({ a: i }));
      assert.equal(
        renderSql(BY_KIND[kind], ["", ""], [client(kind).values(fits, "a")]).params.length,
        limit,
      );
      assert.throws(() => client(kind).values([...fits, { a: 0 }], "a"), {
        name: "RangeError",
        message: new RegExp(
          `^datasource "main": values\\(\\): ${limit + 1} rows of 1 column are ${
            limit + 1
          } parameters, more than .* binds in one statement \\(${limit}\\): split the rows`,
        ),
      });
    }
    assert.deepEqual(
      DIALECTS.map((kind) => BY_KIND[kind].maxParameters),
      [65535, 65535, 32766],
    );
    // Where the database is not known (the static form), the largest limit.
    assert.throws(() => SqlClient.values(Array.from({ length: 65536 }, () => ({ a: 1 })), "a"), {
      name: "RangeError",
      message: /^values\(\): 65536 rows of 1 column are 65536 parameters/,
    });
    assert.ok(valuesOf([{ a: 1 }], ["a"], "values()") instanceof SqlFragment);
  });
});
