import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { checkOptionsObject } from "../src/options_object.ts";
import { propertyOptions } from "./property.ts";

const KNOWN = ["table", "lockedBy"] as const;

describe("checkOptionsObject", () => {
  it("takes an object of known keys, and the empty object", () => {
    checkOptionsObject({}, "where", KNOWN);
    checkOptionsObject({ table: "locks", lockedBy: undefined }, "where", KNOWN);
    checkOptionsObject(Object.create(null), "where", KNOWN);
  });

  it("refuses what is not an object, naming where and what it got", () => {
    for (
      const [value, got] of [
        [null, "null"],
        [undefined, "undefined"],
        [[], "an array"],
        ["x", '"x"'],
        [3, "3"],
        [() => 1, "a function"],
        [Symbol("s"), "symbol"],
        [1n, "bigint"],
      ] as const
    ) {
      assert.throws(() => checkOptionsObject(value, "new SqlLockManager", KNOWN), {
        name: "TypeError",
        message: `new SqlLockManager: the options must be an object, got ${got}`,
      });
    }
  });

  it("names an unknown key as JSON, whatever its characters", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }).filter((k) => !KNOWN.includes(k as never)),
        (key) => {
          const message = (() => {
            try {
              checkOptionsObject({ [key]: 1 }, "where", KNOWN);
            } catch (e) {
              return (e as Error).message;
            }
            return "no error";
          })();
          assert.equal(
            message,
            `where: unknown option ${JSON.stringify(key)}; the options are table, lockedBy`,
          );
          // deno-lint-ignore no-control-regex
          assert.doesNotMatch(message, /[\u0000-\u001f]/);
        },
      ),
      propertyOptions(),
    );
  });
});

describe("every options argument is checked by checkOptionsObject", () => {
  // Each file that still checks an options object itself, and why: the list only shrinks.
  const OWN_CHECKS: Readonly<Record<string, string>> = {
    // bootstrap() points a moved option to its entry point (`scan`, `health`).
    "src/application.ts": "bootstrap's hints",
    // The unknown option is refused when the method is known, with the nearest name.
    "src/cache/cacheable.ts": "names the method and the nearest option",
    // migrate() refuses as a usage error of the command line's API, all unknown names at once.
    "src/migrate/migrate_api.ts": "a usage error",
  };
  // On whatever name the options go by in the function.
  const INLINE = /typeof (?:options?|given) !== "object"|Object\.keys\((?:options?|given)\)/;

  it("finds no inline guard of an options object in src/ but the listed ones", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const found: string[] = [];
    for (const entry of await readdir("src", { recursive: true })) {
      const path = `src/${String(entry).replaceAll("\\", "/")}`;
      if (!path.endsWith(".ts") || path === "src/options_object.ts") continue;
      if (INLINE.test(await readFile(path, "utf8"))) found.push(path);
    }
    assert.deepEqual(found.sort(), Object.keys(OWN_CHECKS).sort());
  });
});

describe("a refused value, shown", () => {
  // What String() cannot write (a null-prototype object throws), and what it writes raw (a line
  // break, a terminal sequence): a refusal shows each on one printable line, naming its place.
  const HOSTILE: readonly unknown[] = [Object.create(null), "a\nb\u001b[2J", { toString: 1 }];

  it("names the option and shows the value on one printable line", async () => {
    const { ConcurrencyLimit, Async } = await import("../tasks.ts");
    const { ResponseStatus } = await import("../mod.ts");
    const { KafkaListener } = await import("../kafka.ts");
    const sites: [string, (value: never) => unknown][] = [
      ["@ConcurrencyLimit(n)", (n) => ConcurrencyLimit(n)],
      ["@Async(executor)", (executor) => Async(executor)],
      ["@ResponseStatus", (status) => ResponseStatus(status)],
      [
        "attempts counts deliveries",
        (attempts) => KafkaListener({ topics: "a", retry: { attempts } }),
      ],
      [
        "concurrency is a whole number",
        (concurrency) => KafkaListener({ topics: "a", concurrency }),
      ],
    ];
    for (const [place, call] of sites) {
      for (const value of HOSTILE) {
        // Any text names an executor here: bootstrap refuses one it does not know.
        if (place === "@Async(executor)" && typeof value === "string") continue;
        assert.throws(() => call(value as never), (error: Error) => {
          assert.equal(error.name, "TypeError", `${place}: ${error.message}`);
          assert.ok(error.message.includes(place), error.message);
          // deno-lint-ignore no-control-regex
          assert.doesNotMatch(error.message, /[\u0000-\u001f]/);
          return true;
        });
      }
    }
  });

  it("finds no String() of a refused value in a message of src/", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const found: string[] = [];
    for (const entry of await readdir("src", { recursive: true })) {
      const path = `src/${String(entry).replaceAll("\\", "/")}`;
      if (!path.endsWith(".ts")) continue;
      if (/got \$\{\s*(?:JSON\.stringify\()?String\(/.test(await readFile(path, "utf8"))) {
        found.push(path);
      }
    }
    assert.deepEqual(found, []);
  });
});
