/** An error's message, or the thrown value as text when it is not an Error. */
export function messageOf(error: unknown): string {
  // Whatever was thrown: a value without a way to be text (`Object.create(null)`) must not turn
  // the report of one failure into a failure that stops the others.
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "a thrown value that cannot be shown as text";
  }
}
