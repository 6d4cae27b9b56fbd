import { ConfigError } from "../config/config_error.ts";

/**
 * Checks, before the server takes its first request, that the folder of upload files
 * (`server.multipart.location`) is one this process can make a file in and delete it from: a
 * missing folder, a file in its place, or a permission the runtime lacks (Deno's `--allow-write`)
 * is a start-up error naming the key, rather than a 500 on the first large upload.
 */
export async function checkUploadFolder(folder: string, where: string): Promise<void> {
  const [{ open, rm }, { join }] = await Promise.all([
    import("node:fs/promises"),
    import("node:path"),
  ]);
  const probe = join(folder, `thaw-upload-check-${crypto.randomUUID()}`);
  let made = false;
  try {
    // `wx`: made here, never an existing file written into.
    const handle = await open(probe, "wx", 0o600);
    made = true;
    try {
      await handle.close();
    } finally {
      await rm(probe);
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    // A folder that takes files and keeps them would keep every upload file too; the one the
    // check made is named, for whoever fixes the folder to remove.
    const left = made && await rm(probe, { force: true }).then(() => false, () => true);
    throw new ConfigError(
      `${where}: ${
        JSON.stringify(folder)
      } is not a folder this process can write upload files to: ${why}` +
        (left ? `; the check could not remove its file ${JSON.stringify(probe)}` : ""),
      { cause: error },
    );
  }
}
