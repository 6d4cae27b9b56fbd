/**
 * A migration file cannot be planned (it is malformed or matches no rule), or the folder of
 * migrations cannot be read. The message starts with the file's path.
 */
export class MigrationFileError extends Error {
  /** The file, relative to its connection's folder (or the folder itself). */
  readonly file: string;

  /**
   * Creates the error.
   *
   * @param file the file's path
   * @param message what is wrong with it
   */
  constructor(file: string, message: string, options?: ErrorOptions) {
    super(`${file}: ${message}`, options);
    this.name = "MigrationFileError";
    this.file = file;
  }
}
