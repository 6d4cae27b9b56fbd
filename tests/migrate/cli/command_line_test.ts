import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCommandLine } from "../../../src/migrate/cli/command_line.ts";
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from "../../../src/migrate/run_request.ts";
import { isMigrationError } from "../../../src/migrate/migration_error.ts";

const bad = (args: string[], pattern: RegExp) =>
  assert.throws(() => parseCommandLine(args), (e: unknown) => {
    assert.ok(isMigrationError(e, "usage"), String(e));
    assert.match(e.message, pattern);
    return true;
  });

describe("parseCommandLine", () => {
  it("takes the seed's flags as written, with defaults for the rest", () => {
    assert.deepEqual(
      parseCommandLine(["-m", "search", "-c", "config", "--sqlPath", "migrations"]),
      {
        help: false,
        mode: "search",
        command: "migrate",
        configDir: "config",
        migrations: "migrations",
        dryRun: false,
        force: false,
        json: false,
        lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_SECONDS * 1000,
      },
    );
    const sql = parseCommandLine([]);
    assert.equal(sql.mode, "sql");
    assert.equal(sql.configDir, ".");
  });

  it("takes the migrations root as --migrations, or as --sqlPath, its old name: the same run", () => {
    const named = parseCommandLine(["status", "-c", "config", "--migrations", "db/files"]);
    const old = parseCommandLine(["status", "-c", "config", "--sqlPath", "db/files"]);
    assert.deepEqual(named, old);
    assert.equal(named.migrations, "db/files");
    assert.equal(parseCommandLine(["--migrations=db"]).migrations, "db");
    assert.equal(parseCommandLine([]).migrations, "migrations");
    bad(["--migrations", ""], /^--migrations needs a value/);
    bad(["--sqlPath", ""], /^--sqlPath needs a value/);
    bad(
      ["--migrations", "a", "--sqlPath", "b"],
      /^--migrations and --sqlPath \(its old name\): give one/,
    );
  });

  it("accepts opensearch as an alias, the commands, and every option", () => {
    const line = parseCommandLine([
      "status",
      "-m",
      "OpenSearch",
      "--connection",
      "logs",
      "--json",
      "--lock-timeout",
      "2.5",
    ]);
    assert.equal(line.mode, "search");
    assert.equal(line.command, "status");
    assert.equal(line.connection, "logs");
    assert.equal(line.json, true);
    assert.equal(line.lockTimeoutMs, 2500);
    assert.equal(parseCommandLine(["unlock"]).command, "unlock");
    assert.equal(parseCommandLine(["--dry-run"]).dryRun, true);
    assert.equal(parseCommandLine(["validate", "--strict-order"]).strictOrder, true);
    assert.equal(parseCommandLine(["--no-strict-order"]).strictOrder, false);
    assert.equal(parseCommandLine([]).strictOrder, undefined, "each connection's setting");
    assert.equal(parseCommandLine(["-h"]).help, true);
  });

  it("takes baseline and repair, with --dry-run, and --force on baseline only", () => {
    const baseline = parseCommandLine(["baseline", "--force", "--dry-run", "--json"]);
    assert.equal(baseline.command, "baseline");
    assert.equal(baseline.force, true);
    assert.equal(baseline.dryRun, true);
    const repair = parseCommandLine(["repair", "--dry-run"]);
    assert.equal(repair.command, "repair");
    assert.equal(repair.dryRun, true);
    assert.equal(repair.force, false);
    assert.equal(parseCommandLine(["repair", "--force"]).force, true);
    bad(["--force"], /--force applies to baseline, repair and unlock, not to migrate/);
    assert.equal(parseCommandLine(["unlock", "--force"]).force, true);
    bad(
      ["validate", "--dry-run"],
      /--dry-run applies to migrate, undo, baseline, repair, not to validate/,
    );
  });

  it("refuses unknown flags, modes and commands, and missing or empty values", () => {
    bad(["--nope"], /Unknown option '--nope'/);
    bad(["-m", "elastic"], /-m elastic: expected search, opensearch or sql/);
    bad(["rollback"], /unknown command "rollback"/);
    bad(["--strict-order", "--no-strict-order"], /contradict each other/);
    bad(["status", "unlock"], /one command expected/);
    bad(["-c"], /argument missing/);
    bad(["-c", ""], /--config needs a value/);
    bad(["--connection="], /--connection needs a value/);
    bad(["status", "--dry-run"], /--dry-run applies to migrate, undo, baseline, repair/);
  });

  it("takes migrate --target and baseline --version, each a version, on those commands only", () => {
    assert.equal(parseCommandLine(["--target", "1.2"]).target, "1.2");
    assert.equal(parseCommandLine(["baseline", "--version", "9_4"]).target, "9_4");
    assert.equal(parseCommandLine(["migrate"]).target, undefined);
    bad(
      ["baseline", "--target", "1"],
      /^--target does not apply to baseline: baseline takes --version$/,
    );
    bad(
      ["migrate", "--version", "1"],
      /^--version does not apply to migrate: migrate takes --target$/,
    );
    bad(
      ["status", "--target", "1"],
      /applies to migrate --target, undo --target, baseline --version, not to status/,
    );
    bad(["--target", "1", "--version", "1"], /give one/);
    for (const version of ["1..1", "V1", "1.", "latest", "-1", "", " 1"]) {
      bad([`--target=${version}`], /expected a version/);
    }
  });

  it("takes undo --count, a whole number of versions from 1, on undo only and never with --target", () => {
    assert.equal(parseCommandLine(["undo", "--count", "3"]).count, 3);
    assert.equal(parseCommandLine(["undo"]).count, undefined);
    for (const value of ["0", "-1", "2.5", "1e3", "x", ""]) {
      bad(["undo", `--count=${value}`], /--count|needs a value/);
    }
    bad(["--count", "2"], /^--count applies to undo, not to migrate$/);
    bad(["undo", "--count", "2", "--target", "1"], /--count and --target 1: give one/);
  });

  it("refuses a lock timeout that is not a number of seconds within a day", () => {
    for (const value of ["-1", "abc", "1e3", "0x10", "86401", " 5", "Infinity", ""]) {
      bad(["--lock-timeout", value], /--lock-timeout/);
    }
    assert.equal(parseCommandLine(["--lock-timeout", "0"]).lockTimeoutMs, 0);
  });

  it("takes a stop timeout in seconds within an hour, absent by default", () => {
    for (const value of ["-1", "abc", "1e3", "3601", " 5", "Infinity", ""]) {
      bad(["--stop-timeout", value], /--stop-timeout/);
    }
    assert.equal(parseCommandLine(["--stop-timeout", "0.5"]).stopTimeoutMs, 500);
    assert.equal(parseCommandLine([]).stopTimeoutMs, undefined);
  });

  it("takes --drift on search status, validate and migrate only", () => {
    for (const command of ["status", "validate", "migrate"]) {
      assert.equal(parseCommandLine([command, "-m", "search", "--drift"]).drift, true, command);
    }
    assert.equal(parseCommandLine(["-m", "opensearch", "--drift", "--dry-run"]).drift, true);
    assert.equal(parseCommandLine(["-m", "search"]).drift, undefined, "absent when not given");
    for (const command of ["baseline", "repair", "unlock"]) {
      bad(
        [command, "-m", "search", "--drift"],
        new RegExp(`--drift applies to status, validate, migrate, not to ${command}`),
      );
    }
    bad(
      ["status", "--drift"],
      /--drift applies to search connections \(-m search\), not to -m sql/,
    );
    bad(["validate", "-m", "SQL", "--drift"], /not to -m sql/);
    bad(["-m", "search", "--drift=yes"], /--drift/);
  });
});
