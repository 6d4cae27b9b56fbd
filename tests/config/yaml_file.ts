import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Runs `run` with the path of an `application.yml` holding `text`, in a folder removed after. */
export async function withYaml(
  text: string,
  run: (file: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-config-"));
  try {
    const file = join(dir, "application.yml");
    await writeFile(file, text);
    await run(file);
  } finally {
    await rm(dir, { recursive: true });
  }
}
