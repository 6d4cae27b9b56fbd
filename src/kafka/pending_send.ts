// A send of the producer from its call until its caller is answered: answered once, by its bound
// at the latest, with the failure of its last try kept for the answer its bound gives.
import { MAX_DURATION_MS } from "../runtime/timer_limit.ts";
import { Deferred } from "../runtime/deferred.ts";
import type { OutgoingRecord, RecordMetadata } from "./outgoing_record.ts";

/** One send's records and its caller's answer, settled by the first resolve or reject. */
export class PendingSend {
  /** The records sent, in order. */
  readonly records: readonly OutgoingRecord[];
  readonly #answer = new Deferred<readonly RecordMetadata[]>();
  // What a rejection hands the caller in place of the client's error.
  readonly #explain: (error: unknown) => unknown;
  #settled = false;
  #lastFailure: unknown;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `explain` makes each rejection's error (the client's, said in the caller's terms). */
  constructor(records: readonly OutgoingRecord[], explain: (error: unknown) => unknown) {
    this.records = records;
    this.#explain = explain;
  }

  /** What the caller awaits: where each record went, or why the send failed. */
  get answer(): Promise<readonly RecordMetadata[]> {
    return this.#answer.promise;
  }

  /** Its caller was answered (its bound passed): its records are not handed on any more. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Why its last try failed: the cause its caller is given at its bound. */
  get lastFailure(): unknown {
    return this.#lastFailure;
  }

  /** Notes why a try failed. */
  failed(error: unknown): void {
    this.#lastFailure = error;
  }

  /**
   * Runs `atBound` after `ms` unless the send was answered first. The client can neither be told
   * to drop a request it was handed nor bound its tries in time: the bound answers the caller.
   */
  bound(ms: number, atBound: () => void): void {
    this.#timer = setTimeout(atBound, Math.min(ms, MAX_DURATION_MS));
  }

  /** Answers where each record went, unless answered already. */
  resolve(sent: readonly RecordMetadata[]): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#answer.resolve(sent);
  }

  /**
   * Answers `error`, explained, unless answered already; with `error` itself when explaining it
   * throws, so that the caller is answered whatever went wrong.
   */
  reject(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    let explained: unknown = error;
    try {
      explained = this.#explain(error);
    } catch {
      // The client's own error stands: a caller left unanswered would wait for ever.
    }
    this.#answer.reject(explained);
  }
}
