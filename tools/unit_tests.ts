// Prints which of the given test files are in one part of the suite, one a line. By default the
// unit tests: the files `npm run test:unit` runs (`tools/test_on.sh --unit`), those that need
// nothing `npm install` does not give.
//
// The rule: a test file is an integration test when it, or a helper under tests/ or tools/ that it
// imports (directly or through other helpers), imports one of the modules of NEEDS below or has a
// line starting `// integration test:`; every other test file is a unit test. The marker is for
// what an import does not show (a tool run by path). A file mixing unit and server cases is an
// integration test as a whole. Test files are classified by what they import, so moving or
// renaming one changes nothing; moving a helper of NEEDS fails here until its path is updated.
//
// `--part` splits the integration tests by the server they lean on, so that `npm test`
// (tools/test_all.sh) can run parts side by side: `cluster`, the files that reach OpenSearch's
// three-node cluster (they hang its nodes); `search`, those that reach the single OpenSearch node
// and not the cluster; `kafka`, those that reach a Kafka broker (the single one, or the three that
// some kill: only this part uses them); `other`, the rest (databases, browser, workerd, ...), whose servers give
// each test its own database, index or port, and the tests of the single node marked
// `// part: other` (see OTHER_PART).
//
// Run: `deno run --allow-read tools/unit_tests.ts [--why | --part unit|cluster|search|kafka|other]
// tests/a_test.ts tests/b_test.ts ...`; `--why` prints, for each integration test, the chain of
// imports that reaches what it needs.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** What a test needs that `npm install` does not give, by the module that reaches it. */
const NEEDS: Readonly<Record<string, string>> = {
  // Helpers of the repository, by path from its root.
  "tests/migrate/search/three_nodes.ts":
    "OpenSearch's three-node cluster (tools/opensearch_cluster.sh)",
  "tests/migrate/search/cluster.ts":
    "OpenSearch (tools/opensearch.sh, tools/opensearch_cluster.sh)",
  "tests/migrate/search/servers.ts": "nginx, tinyproxy and openssl from Debian",
  "tests/migrate/sql/databases.ts": "PostgreSQL and MariaDB (tools/databases.sh)",
  "tests/kafka/three_brokers.ts": "Kafka's three-broker cluster (tools/kafka.sh start-cluster)",
  "tests/kafka/broker.ts": "Apache Kafka (tools/kafka.sh start)",
  "tests/storage/s3_server.ts": "S3Proxy (tools/s3proxy.sh)",
  "tools/chromium.ts": "Chromium",
  // Packages, by name (an `import`, or a `require` as for workerd's binary).
  "puppeteer-core": "Chromium",
  "pg": "PostgreSQL",
  "mysql2": "MariaDB",
  "workerd": "workerd",
  "@aws-sdk/client-sqs": "ElasticMQ (tools/elasticmq.sh)",
};

const MARKER = /^\/\/ integration test:/m;
// A test file of the single search node's part whose every index, template and record is named
// for it alone runs with the other part instead, beside the search lane: `// part: other` and
// why, in the test file itself (not a helper). For a test whose cost is its own (compiling,
// installing), not the node's.
const OTHER_PART = /^\/\/ part: other\b/m;

const root = fileURLToPath(new URL("../", import.meta.url));

for (const need of Object.keys(NEEDS)) {
  if (need.endsWith(".ts") && !existsSync(join(root, need))) {
    console.error(
      `tools/unit_tests.ts: ${need} is gone; put its new path in NEEDS (or a unit run could ` +
        `start a test that needs ${NEEDS[need]})`,
    );
    process.exit(2);
  }
}

/** The module specifiers of `from "x"`, `import "x"`, `import("x")` and `require("x")`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*\(?\s*["']([^"']+)["']/g,
    /\b(?:require|createRequire\([^()]*\))\s*\(\s*["']([^"']+)["']/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) found.push(match[1]);
  }
  return found;
}

/** The package a bare specifier names (`npm:` dropped, scope kept), or undefined for a path. */
function packageOf(specifier: string): string | undefined {
  const bare = specifier.replace(/^npm:\/?/, "");
  if (bare.startsWith(".") || bare.startsWith("/") || /^[a-z]+:/.test(bare)) return undefined;
  const parts = bare.split("/");
  // `npm:pg@8`, `npm:@scope/name@1/sub`: the version is not part of the name.
  const unversioned = (name: string) => name.replace(/(?!^)@.*$/, "");
  return bare.startsWith("@")
    ? `${parts[0]}/${unversioned(parts[1] ?? "")}`
    : unversioned(parts[0]);
}

/**
 * Why `file` (a path from the root) is an integration test, as the chain of imports that reaches
 * what it needs (`a_test.ts -> helper.ts -> pg: PostgreSQL`), or null for a unit test.
 */
function reason(file: string, seen: Set<string> = new Set()): string | null {
  // One walk per test file, each helper once: a result cached inside an import cycle would depend
  // on which test was classified first.
  if (seen.has(file)) return null;
  seen.add(file);
  const text = readFileSync(join(root, file), "utf8");
  let why: string | null = file in NEEDS
    ? `${file}: ${NEEDS[file]}`
    : MARKER.test(text)
    ? `${file}: its "// integration test:" line`
    : null;
  for (const specifier of why === null ? specifiers(text) : []) {
    const name = packageOf(specifier);
    if (name !== undefined) {
      if (name in NEEDS) why = `${file} -> ${name}: ${NEEDS[name]}`;
    } else if (!/^[a-z]+:/.test(specifier)) {
      const target = relative(root, resolve(root, dirname(file), specifier));
      // Only the tests' helpers are followed: the library, its entry points and the examples are
      // what the tests test (and load a database driver only when a test asks for that database).
      if (/^(tests|tools)\//.test(target) && existsSync(join(root, target))) {
        const inner = reason(target, seen);
        if (inner !== null) why = `${file} -> ${inner}`;
      }
    }
    if (why !== null) break;
  }
  return why;
}

/** Every module of NEEDS that `file` reaches through the tests' helpers, and the marker. */
function needs(file: string, seen: Set<string> = new Set()): Set<string> {
  const found = new Set<string>();
  if (seen.has(file)) return found;
  seen.add(file);
  if (file in NEEDS) found.add(file);
  const text = readFileSync(join(root, file), "utf8");
  if (MARKER.test(text)) found.add("marker");
  for (const specifier of specifiers(text)) {
    const name = packageOf(specifier);
    if (name !== undefined) {
      if (name in NEEDS) found.add(name);
    } else if (!/^[a-z]+:/.test(specifier)) {
      const target = relative(root, resolve(root, dirname(file), specifier));
      if (/^(tests|tools)\//.test(target) && existsSync(join(root, target))) {
        for (const need of needs(target, seen)) found.add(need);
      }
    }
  }
  return found;
}

type Part = "unit" | "cluster" | "search" | "kafka" | "other";
const PARTS: readonly Part[] = ["unit", "cluster", "search", "kafka", "other"];

function partOf(file: string): Part {
  const reached = needs(file);
  if (reached.size === 0) return "unit";
  if (reached.has("tests/migrate/search/three_nodes.ts")) return "cluster";
  if (reached.has("tests/kafka/three_brokers.ts") || reached.has("tests/kafka/broker.ts")) {
    return "kafka";
  }
  if (reached.has("tests/migrate/search/cluster.ts")) {
    return OTHER_PART.test(readFileSync(join(root, file), "utf8")) ? "other" : "search";
  }
  return "other";
}

const args = process.argv.slice(2);
const why = args[0] === "--why";
const part = args[0] === "--part" ? args[1] : "unit";
const files = args.slice(why ? 1 : args[0] === "--part" ? 2 : 0);
if (files.length === 0 || !PARTS.includes(part as Part)) {
  console.error(
    "usage: deno run --allow-read tools/unit_tests.ts [--why | --part unit|cluster|search|kafka|other] " +
      "<test file>...",
  );
  process.exit(2);
}
const whys = files.map((file) => reason(relative(root, resolve(file))));
const parts = files.map((file) => partOf(relative(root, resolve(file))));
// The two walks must agree on what a unit test is: `reason` stops at the first need it finds.
for (const [i, file] of files.entries()) {
  if ((whys[i] === null) !== (parts[i] === "unit")) {
    console.error(`tools/unit_tests.ts: ${file} is classified two ways`);
    process.exit(2);
  }
}
const chosen = files.filter((_, i) => parts[i] === part);
for (const file of chosen) console.log(file);
console.error(`${part} tests: ${chosen.length} of ${files.length} test files`);
if (why) {
  for (const chain of whys) if (chain !== null) console.error(`  integration: ${chain}`);
}
