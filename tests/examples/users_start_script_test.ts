// `npm start` runs the sample users app under Deno with --allow-env naming what it may read: a
// variable left out reads as unset, so the app silently runs on its defaults (SQLite for
// THAW_PROFILES_ACTIVE=postgres, which application.yml's comment promises).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";

const root = new URL("../../", import.meta.url);

describe("npm start of the sample users app", () => {
  it("lets Deno read every variable its configuration and profiles name", async () => {
    const pkg = JSON.parse(await readFile(new URL("package.json", root), "utf8"));
    const start = String(pkg.scripts.start);
    const allowed = new Set(/--allow-env=(\S+)/.exec(start)?.[1].split(",") ?? []);
    const named = new Set(["THAW_PROFILES_ACTIVE"]);
    for (const file of ["application.yml", "application-postgres.yml"]) {
      const text = await readFile(new URL(`examples/users/${file}`, root), "utf8");
      for (const [, name] of text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)) named.add(name);
    }
    const missing = [...named].filter((name) => !allowed.has(name));
    assert.deepEqual(missing, [], `npm start: --allow-env lacks ${missing.join(",")}`);
  });
});
