// The names of the statements one PostgreSQL connection keeps prepared.
//
// A statement with values, sent with a name, is parsed and described by the server once per
// connection; pg remembers which names it parsed and sends only the values from then on. Keyed
// by the statement's text, not its template's strings: the same call site renders other text
// when an identifier or a fragment in it changes, and one name must always mean one text.

/** How many statements a connection keeps prepared; the least recently used go beyond it. */
export const PREPARED_PER_CONNECTION = 100;

/** The name a text runs under, and the name it put out, which the server should forget. */
export interface StatementName {
  readonly name: string;
  readonly evicted?: string;
}

/** A text's name, and when it was last used (a count of uses of its connection). */
interface Named {
  readonly name: string;
  used: number;
}

/** One connection's statement names, least recently used first; a name is never given twice. */
export class PreparedStatements {
  readonly #limit: number;
  readonly #names = new Map<string, Named>();
  #next = 0;
  #uses = 0;

  constructor(limit: number = PREPARED_PER_CONNECTION) {
    this.#limit = limit;
  }

  /** The name `text` runs under: the one it has, or a new one (putting out the oldest). */
  name(text: string): StatementName {
    const kept = this.#names.get(text);
    // A use is a count stamped on the name, not a move in the map: the statements run most are
    // the ones run on every call, and the search for the oldest comes only with a new text.
    if (kept !== undefined) {
      kept.used = ++this.#uses;
      return kept;
    }
    const named: Named = { name: `thaw_${this.#next++}`, used: ++this.#uses };
    this.#names.set(text, named);
    if (this.#names.size <= this.#limit) return named;
    // The new name has the highest count: the oldest is another one.
    let oldest: [string, Named] | undefined;
    for (const entry of this.#names) {
      if (oldest === undefined || entry[1].used < oldest[1].used) oldest = entry;
    }
    if (oldest === undefined) return named;
    this.#names.delete(oldest[0]);
    return { name: named.name, evicted: oldest[1].name };
  }

  /** Forgets `text`'s name (its plan went stale): its next use gets a new one. */
  forget(text: string): string | undefined {
    const name = this.#names.get(text)?.name;
    this.#names.delete(text);
    return name;
  }
}
