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

/** One connection's statement names, least recently used first; a name is never given twice. */
export class PreparedStatements {
  readonly #limit: number;
  readonly #names = new Map<string, string>();
  #next = 0;

  constructor(limit: number = PREPARED_PER_CONNECTION) {
    this.#limit = limit;
  }

  /** The name `text` runs under: the one it has, or a new one (putting out the oldest). */
  name(text: string): StatementName {
    const names = this.#names;
    const kept = names.get(text);
    if (kept !== undefined) {
      // Moved to the end: Map keeps its keys in the order they were set.
      names.delete(text);
      names.set(text, kept);
      return { name: kept };
    }
    const name = `thaw_${this.#next++}`;
    names.set(text, name);
    if (names.size <= this.#limit) return { name };
    const [oldest, evicted] = names.entries().next().value as [string, string];
    names.delete(oldest);
    return { name, evicted };
  }

  /** Forgets `text`'s name (its plan went stale): its next use gets a new one. */
  forget(text: string): string | undefined {
    const name = this.#names.get(text);
    this.#names.delete(text);
    return name;
  }
}
