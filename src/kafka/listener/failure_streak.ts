// Which failures of a loop that tries again get a log line: the first of a streak, every tenth,
// and the first of each kind the streak had not had yet. A new cause shows at once (an offset the
// broker refused, then the reset that `none` refuses: two things to fix), and a cause whose text
// changes only in its numbers (a broker's id, a count of tries) is not said again each try.

// Kinds kept per streak: past them, only every tenth failure is said.
const KINDS_KEPT = 16;
const NUMBERS = /\d+/g;

/** The failures in a row of one loop, and which of them to say. */
export class FailureStreak {
  #count = 0;
  readonly #kinds = new Set<string>();

  /** How many failed in a row. */
  get count(): number {
    return this.#count;
  }

  /** Counts one more failure; gives whether it is to be said. */
  failed(error: unknown): boolean {
    this.#count += 1;
    const kind = kindOf(error);
    const isNew = !this.#kinds.has(kind) && this.#kinds.size < KINDS_KEPT;
    if (isNew) this.#kinds.add(kind);
    return isNew || this.#count % 10 === 0;
  }

  /** A success ends the streak. */
  succeeded(): void {
    this.#count = 0;
    this.#kinds.clear();
  }
}

/**
 * A failure's kind: its class, code and message with each number made one, and the kinds of the
 * errors it gathers (the client wraps a broker's refusal, whatever its code, in one message).
 * Never throws: an error that cannot be read is of one kind.
 */
export function kindOf(error: unknown, depth = 0): string {
  try {
    if (!(error instanceof Error)) return String(error).replace(NUMBERS, "#");
    const code = (error as { code?: unknown }).code;
    const shownCode = typeof code === "string" || typeof code === "number" ? code : "";
    const own = `${error.name}:${shownCode}:${String(error.message).replace(NUMBERS, "#")}`;
    const gathered = (error as { errors?: unknown }).errors;
    if (depth >= 2 || !Array.isArray(gathered)) return own;
    return [own, ...gathered.slice(0, 4).map((inner) => kindOf(inner, depth + 1))].join("|");
  } catch {
    return "unreadable";
  }
}
