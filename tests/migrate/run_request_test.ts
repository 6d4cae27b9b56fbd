// The run request both the command line and `migrate()` build: which options apply to which
// command and mode, checked against a model written from the usage text.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Command } from "../../src/migrate/command/command.ts";
import { BUILT_IN_CAPABILITIES } from "../../src/migrate/built_in_capabilities.ts";
import { isMigrationError } from "../../src/migrate/migration_error.ts";
import {
  checkRunRequest,
  parseLockTimeout,
  parseMode,
  parseStopTimeout,
  type RunRequest,
} from "../../src/migrate/run_request.ts";
import { propertyOptions } from "../property.ts";

const COMMANDS: Command[] = ["migrate", "status", "validate", "baseline", "repair", "unlock"];

// The usage text, as a model: which commands take which option.
const TAKES = {
  dryRun: ["migrate", "baseline", "repair"],
  drift: ["status", "validate", "migrate"],
  force: ["baseline", "repair", "unlock"],
} as const;

function accepted(r: RunRequest): boolean {
  return COMMANDS.includes(r.command) &&
    r.connection !== "" &&
    (!r.dryRun || (TAKES.dryRun as readonly string[]).includes(r.command)) &&
    (!r.drift || (r.mode === "search" && (TAKES.drift as readonly string[]).includes(r.command))) &&
    (!r.force || (TAKES.force as readonly string[]).includes(r.command));
}

const requests = fc.record({
  mode: fc.constantFrom("sql" as const, "search" as const),
  command: fc.constantFrom(...COMMANDS, "help" as Command, "--force" as Command),
  configDir: fc.constant("config"),
  migrations: fc.constant("migrations"),
  // Left out of requiredKeys: absent or given, never given as undefined.
  connection: fc.constantFrom("", "main", "--force"),
  dryRun: fc.boolean(),
  force: fc.boolean(),
  drift: fc.constant(true as const),
  lockTimeoutMs: fc.nat(),
}, {
  requiredKeys: [
    "mode",
    "command",
    "configDir",
    "migrations",
    "dryRun",
    "force",
    "lockTimeoutMs",
  ],
});

describe("checkRunRequest", () => {
  it("property: accepts exactly the requests the usage allows, and refuses the others as usage", () => {
    fc.assert(
      fc.property(requests, (r) => {
        let refused: unknown;
        try {
          assert.equal(checkRunRequest(r), r);
        } catch (error) {
          refused = error;
        }
        assert.equal(refused === undefined, accepted(r), String(refused));
        if (refused !== undefined) assert.ok(isMigrationError(refused, "usage"), String(refused));
      }),
      propertyOptions(300),
    );
  });

  it("names the option and the commands that take it, as the command line spells them", () => {
    const base: RunRequest = {
      mode: "sql",
      command: "status",
      configDir: ".",
      migrations: "migrations",
      dryRun: false,
      force: false,
      lockTimeoutMs: 0,
    };
    const message = (r: Partial<RunRequest>) => {
      try {
        checkRunRequest({ ...base, ...r });
      } catch (error) {
        return (error as Error).message;
      }
      assert.fail("accepted");
    };
    assert.equal(
      message({ dryRun: true }),
      "--dry-run applies to migrate, undo, baseline, repair, not to status",
    );
    assert.equal(
      message({ drift: true }),
      "--drift applies to search connections (-m search), not to -m sql",
    );
    assert.equal(
      message({ mode: "search", command: "repair", drift: true }),
      "--drift applies to status, validate, migrate, not to repair",
    );
    assert.equal(
      message({ force: true }),
      "--force applies to baseline, repair and unlock, not to status",
    );
    assert.equal(
      message({ command: "nope" as Command }),
      'unknown command "nope" (migrate, undo, status, validate, baseline, repair, unlock)',
    );
  });

  it("refuses undo by the driver's capabilities: both built-in drivers undo", () => {
    const base: RunRequest = {
      mode: "search",
      command: "undo",
      configDir: ".",
      migrations: "migrations",
      dryRun: false,
      force: false,
      lockTimeoutMs: 0,
    };
    assert.equal(checkRunRequest(base).command, "undo");
    assert.equal(checkRunRequest({ ...base, mode: "sql" }).command, "undo");
    const can = {
      drift: false,
      reindex: false,
      repeatable: true,
      code: true,
      callbacks: true,
      undo: true as const,
    };
    const { undo: _, ...cannot } = can;
    assert.throws(
      () => checkRunRequest(base, undefined, { sql: can, search: cannot }),
      (error: unknown) =>
        isMigrationError(error, "usage") &&
        error.message === "undo applies to sql connections (-m sql), not yet to -m search",
    );
  });

  it("refuses --drift by the driver's capabilities, not by the mode's name", () => {
    const base: RunRequest = {
      mode: "search",
      command: "status",
      configDir: ".",
      migrations: "migrations",
      dryRun: false,
      force: false,
      drift: true,
      lockTimeoutMs: 0,
    };
    const can = { drift: true, reindex: false, repeatable: true, code: true, callbacks: true };
    const cannot = { ...can, drift: false };
    // The built-in drivers as they are: search compares the cluster, SQL does not.
    assert.equal(BUILT_IN_CAPABILITIES.search.drift, true);
    assert.equal(BUILT_IN_CAPABILITIES.sql.drift, false);
    assert.equal(checkRunRequest(base).drift, true);
    // A search driver without the capability is refused, with the message of today's refusal of
    // SQL, naming the modes whose drivers have it; a SQL driver with it is not.
    const swapped = { sql: can, search: cannot };
    assert.throws(
      () => checkRunRequest(base, undefined, swapped),
      (error: unknown) =>
        isMigrationError(error, "usage") &&
        error.message === "--drift applies to sql connections (-m sql), not to -m search",
    );
    assert.equal(checkRunRequest({ ...base, mode: "sql" }, undefined, swapped).drift, true);
    assert.throws(
      () => checkRunRequest({ ...base, mode: "sql" }),
      (error: unknown) =>
        isMigrationError(error, "usage") &&
        error.message === "--drift applies to search connections (-m search), not to -m sql",
    );
  });

  for (
    const [flag, parse, max] of [
      ["--lock-timeout", parseLockTimeout, 86_400],
      ["--stop-timeout", parseStopTimeout, 3_600],
    ] as const
  ) {
    it(`property: ${flag} takes decimal seconds to ${max}, as whole milliseconds`, () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.integer({ min: 0, max: max + 100 }).map(String),
            fc.double({ min: 0, max: max * 1.05, noNaN: true }).map(String),
            fc.string(),
          ),
          (text) => {
            const model = /^\d+(\.\d+)?$/.test(text) && Number(text) <= max;
            let ms: number | undefined;
            try {
              ms = parse(text);
            } catch (error) {
              assert.ok(isMigrationError(error, "usage"));
              assert.equal(
                (error as Error).message,
                `${flag} ${text}: expected a number of seconds from 0 to ${max}`,
              );
            }
            assert.equal(ms !== undefined, model, text);
            if (ms !== undefined) assert.equal(ms, Math.round(Number(text) * 1000));
          },
        ),
        propertyOptions(300),
      );
    });
  }

  it("takes -m in any case, opensearch as search, and nothing else", () => {
    assert.deepEqual(["SQL", "Search", "opensearch"].map((m) => parseMode(m)), [
      "sql",
      "search",
      "search",
    ]);
    assert.throws(() => parseMode("elastic"), {
      message: "-m elastic: expected search, opensearch or sql",
    });
  });
});
