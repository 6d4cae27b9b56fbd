// A multipart body read as it arrives holds a chunk or two at a time, on every runtime, through
// `app.fetch` as workerd and tests feed it: the file part goes to a temporary file, and what the
// reader kept of each chunk must be garbage once the chunk is written. Measured in a process of
// its own (tests/fixtures/upload_in_process.ts), since Deno runs test files side by side in one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { RUNTIME } from "../runtime.ts";
import { tempDir } from "../temp_dir.ts";

const MiB = 1024 * 1024;
const FIXTURE = fileURLToPath(new URL("../fixtures/upload_in_process.ts", import.meta.url));

/** The fixture's command on this runtime, with the garbage collector exposed. */
function command(location: string): [string, string[]] {
  switch (RUNTIME) {
    case "deno":
      return [process.execPath, ["run", "-A", "--v8-flags=--expose-gc", FIXTURE, location]];
    case "bun":
      return [process.execPath, [FIXTURE, location]];
    case "node":
      return [
        process.execPath,
        ["--expose-gc", "--import", import.meta.resolve("tsx"), FIXTURE, location],
      ];
  }
}

describe(`a streamed multipart upload through app.fetch on ${RUNTIME}`, () => {
  it("keeps far less than the body alive (512 MiB: under 192 MiB)", async () => {
    await using location = await tempDir("thaw-upload-memory-");
    const child = spawn(...command(location.path), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => out += chunk);
    child.stderr.on("data", (chunk) => err += chunk);
    const [code] = await once(child, "close");
    assert.equal(code, 0, `the upload process exited ${code}:\n${out}\n${err}`);
    const figures = JSON.parse(out.trim().split("\n").at(-1)!) as {
      status: number;
      answer: string;
      before: number;
      retained: number;
      peak: number | null;
    };
    assert.equal(figures.status, 200, figures.answer);
    assert.deepEqual(JSON.parse(figures.answer), { size: 512 * MiB });
    const grown = figures.retained - figures.before;
    assert.ok(
      grown < 192 * MiB,
      `resident memory after a collection grew by ${Math.round(grown / MiB)} MiB while a ` +
        `512 MiB upload was read (from ${Math.round(figures.before / MiB)} MiB; peak ` +
        `${figures.peak === null ? "unknown" : Math.round(figures.peak / MiB)} MiB)`,
    );
    // The temporary file went with the answer.
    assert.deepEqual(await readdir(location.path), []);
  });
});
