import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  currentRuntime,
  type RuntimeInfo,
  typeScriptRefusal,
  typeScriptSupport,
} from "../../../src/migrate/code/typescript_support.ts";
import { RUNTIME } from "../../runtime.ts";

/** Node `version` started as `node <execArgv> /app/cli.js -c config`, from `/app`. */
function node(
  version: string,
  execArgv: string[] = [],
  more: Partial<RuntimeInfo> = {},
): RuntimeInfo {
  return {
    name: "node",
    version,
    execArgv,
    nodeOptions: "",
    execPath: "/usr/local/bin/node",
    argv: ["/usr/local/bin/node", "/app/cli.js", "-c", "config"],
    cwd: "/app",
    ...more,
  };
}

describe("typeScriptSupport", () => {
  const cases: [string, RuntimeInfo, "native" | "loader" | "none"][] = [
    ["Deno", { ...node("2.9.5"), name: "deno" }, "native"],
    ["Bun", { ...node("1.4.5"), name: "bun" }, "native"],
    ["another runtime", { ...node("1.0.0"), name: "other" }, "none"],
    ["another runtime, with a flag Node would read", {
      ...node("1.0.0", ["--import", "tsx"]),
      name: "other",
    }, "none"],
    ["Node 20", node("20.20.2"), "none"],
    ["Node 22.5 (no type stripping yet)", node("22.5.1"), "none"],
    ["Node 22.6 with no flag", node("22.6.0"), "none"],
    ["Node 22.17 with no flag", node("22.17.1"), "none"],
    ["Node 23.5 with no flag", node("23.5.0"), "none"],
    [
      "Node 22.6 with --experimental-strip-types",
      node("22.6.0", ["--experimental-strip-types"]),
      "native",
    ],
    [
      "Node 22.9 with the flag in NODE_OPTIONS",
      node("22.9.0", [], {
        nodeOptions: "--max-old-space-size=4096 --experimental-strip-types",
      }),
      "native",
    ],
    [
      "Node 22.18 (features.typescript: strip)",
      node("22.18.0", [], { typescriptFeature: "strip" }),
      "native",
    ],
    [
      "Node 23.6 (features.typescript: transform)",
      node("23.6.0", [], { typescriptFeature: "transform" }),
      "native",
    ],
    [
      "Node 26 (features.typescript: true)",
      node("26.10.0", [], { typescriptFeature: true }),
      "native",
    ],
    [
      "Node 24 with types off (features.typescript: false)",
      node("24.0.0", [], { typescriptFeature: false }),
      "none",
    ],
    [
      "Node 20 with --experimental-strip-types (no such flag there)",
      node("20.20.2", ["--experimental-strip-types"]),
      "none",
    ],
    ["Node 20 with --import tsx", node("20.20.2", ["--import", "tsx"]), "loader"],
    ["Node 20 with --import=tsx", node("20.20.2", ["--import=tsx"]), "loader"],
    ["Node 20 with --loader ts-node/esm", node("20.20.2", ["--loader", "ts-node/esm"]), "loader"],
    [
      "Node 20 with --experimental-loader=x",
      node("20.20.2", ["--experimental-loader=x"]),
      "loader",
    ],
    [
      "Node 20 with --require ts-node/register",
      node("20.20.2", ["--require", "ts-node/register"]),
      "loader",
    ],
    ["Node 20 with -r ts-node/register", node("20.20.2", ["-r", "ts-node/register"]), "loader"],
    [
      "Node 20 with --import in NODE_OPTIONS",
      node("20.20.2", [], { nodeOptions: "--import tsx" }),
      "loader",
    ],
    [
      "Node 20 with --require= in NODE_OPTIONS",
      node("20.20.2", [], {
        nodeOptions: '--require="/a b/register.cjs"',
      }),
      "loader",
    ],
    [
      "Node 20 with a flag that only looks like one",
      node("20.20.2", ["--important", "--requirements"]),
      "none",
    ],
    [
      "Node 20, a script argument --import (not Node's)",
      node("20.20.2", [], {
        argv: ["/usr/local/bin/node", "/app/cli.js", "--import", "x"],
      }),
      "none",
    ],
  ];
  for (const [name, rt, expected] of cases) {
    it(`${name}: ${expected}`, () => {
      assert.equal(typeScriptSupport(rt), expected);
    });
  }
});

describe("typeScriptRefusal", () => {
  it("Node 22.6 to 22.17: the same command with the flag right after the executable", () => {
    assert.equal(
      typeScriptRefusal("main/V3__backfill.ts", node("22.12.0", ["--max-old-space-size=4096"])),
      "Node 22.12.0 strips TypeScript types only with a flag: run " +
        "node --experimental-strip-types --max-old-space-size=4096 cli.js -c config",
    );
    assert.equal(
      typeScriptRefusal(
        "V3__backfill.ts",
        node("22.6.0", [], {
          argv: [
            "/usr/local/bin/node",
            "/app/node_modules/@thaw/thaw/dist/cli.js",
            "-c",
            "config",
            "--sqlPath",
            "migrations",
          ],
        }),
      ),
      "Node 22.6.0 strips TypeScript types only with a flag: run " +
        "node --experimental-strip-types node_modules/@thaw/thaw/dist/cli.js -c config --sqlPath migrations",
    );
  });

  it("Node 23.0 to 23.5 too; 22.17 and 23.5 are the last", () => {
    for (const version of ["22.17.1", "23.0.0", "23.5.0"]) {
      assert.match(
        typeScriptRefusal("V3__x.ts", node(version)),
        /only with a flag: run node --experimental-strip-types cli\.js/,
      );
    }
  });

  it("Node below 22.6: tsx, a later Node, or a .js file", () => {
    assert.equal(
      typeScriptRefusal("main/V3__backfill.ts", node("20.20.2")),
      "Node 20.20.2 cannot import TypeScript: run npx tsx cli.js -c config, " +
        "or use Node 22.18 or later, or write it as main/V3__backfill.js",
    );
    assert.match(
      typeScriptRefusal("V1__a.mts", node("22.5.1")),
      /Node 22\.5\.1 cannot import TypeScript: .*write it as V1__a\.mjs$/,
    );
    assert.match(typeScriptRefusal("V1__a.cts", node("18.20.0")), /write it as V1__a\.cjs$/);
  });

  it("quotes only the words the shell would split or expand, a ' as '\\''", () => {
    const rt = node("20.20.2", [], {
      argv: [
        "/usr/local/bin/node",
        "/app/my scripts/cli.js",
        "--name",
        "it's",
        "-c",
        "/etc/thaw/config.yml",
        "--url=postgres://u@h:5432/db",
        "$HOME",
        "",
      ],
    });
    assert.equal(
      typeScriptRefusal("V3__x.ts", rt),
      "Node 20.20.2 cannot import TypeScript: run npx tsx 'my scripts/cli.js' --name " +
        `'it'\\''s' -c /etc/thaw/config.yml --url=postgres://u@h:5432/db '$HOME' '', ` +
        "or use Node 22.18 or later, or write it as V3__x.js",
    );
  });

  it("the script relative to the working directory only when it is inside it", () => {
    const outside = node("22.7.0", [], {
      cwd: "/app/sub",
      argv: ["/usr/local/bin/node", "/app/cli.js", "/app/sub/config.yml"],
    });
    assert.match(
      typeScriptRefusal("V3__x.ts", outside),
      /run node --experimental-strip-types \/app\/cli\.js config\.yml$/,
    );
    const prefix = node("22.7.0", [], {
      cwd: "/app",
      argv: ["/usr/local/bin/node", "/application/cli.js"],
    });
    assert.match(
      typeScriptRefusal("V3__x.ts", prefix),
      /run node --experimental-strip-types \/application\/cli\.js$/,
    );
    const root = node("22.7.0", [], { cwd: "/", argv: ["/usr/local/bin/node", "/app/cli.js"] });
    assert.match(
      typeScriptRefusal("V3__x.ts", root),
      /run node --experimental-strip-types app\/cli\.js$/,
    );
  });

  it("the executable as its path when it is not called node", () => {
    const rt = node("22.7.0", ["--inspect"], { execPath: "/opt/my node/bin/node22" });
    assert.match(
      typeScriptRefusal("V3__x.ts", rt),
      /run '\/opt\/my node\/bin\/node22' --experimental-strip-types --inspect cli\.js -c config$/,
    );
  });

  it("a later Node started with types off: the command without that flag", () => {
    const rt = node("24.1.0", ["--no-experimental-strip-types"], { typescriptFeature: false });
    assert.equal(
      typeScriptRefusal("V3__x.ts", rt),
      "Node 24.1.0 was started with --no-experimental-strip-types: run node cli.js -c config, " +
        "or write it as V3__x.js",
    );
  });

  it("a runtime that is neither", () => {
    assert.match(
      typeScriptRefusal("V3__x.ts", { ...node("1.0.0"), name: "other" }),
      /^\w+ cannot import TypeScript: .*write it as V3__x\.js$/,
    );
  });
});

describe(`currentRuntime on ${RUNTIME}`, () => {
  it("reads the runtime running the tests, and says it can import TypeScript", () => {
    const rt = currentRuntime();
    assert.equal(rt.name, RUNTIME);
    assert.match(rt.version, /^\d+\.\d+\.\d+/);
    assert.ok(rt.argv.length >= 1, JSON.stringify(rt.argv));
    assert.notEqual(rt.cwd, "");
    // The suite runs Node as `node --import tsx`: a loader, not Node's own stripping (Node 20).
    const expected = RUNTIME === "node" && !rt.typescriptFeature ? "loader" : "native";
    assert.equal(typeScriptSupport(rt), expected, JSON.stringify(rt));
  });
});
