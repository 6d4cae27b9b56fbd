/** The commands of the migration runner. */
export type Command = "migrate" | "status" | "validate" | "baseline" | "repair" | "unlock" | "undo";
