import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "../temp_dir.ts";

/** Runs `run` with the path of an `application.yml` holding `text`, in a folder removed after. */
export async function withYaml(
  text: string,
  run: (file: string) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir("thaw-config-");
  const file = join(dir.path, "application.yml");
  await writeFile(file, text);
  await run(file);
}
