// PostgreSQL's connections for one datasource, handed out one caller at a time: Thaw's own small
// pool over pg.Client rather than pg.Pool, whose hand-out (a promise or callback chain, a timer
// armed and cleared for each client given back, listeners added and taken off each time one is
// out) cost each statement as much CPU as pg's own client spends on it.
import { closedError, timeoutError } from "./acquire_within.ts";

/** How the pool opens and closes one connection; `open` rejects with the error to give callers. */
export interface ClientFactory<C> {
  open(): Promise<C>;
  /** Ends `client` without waiting (a server that stopped answering would never acknowledge). */
  close(client: C): void;
}

/** The pool's settings: the datasource named in errors, its max-size and idle-timeout. */
export interface ClientsSettings {
  readonly name: string;
  readonly maxSize: number;
  readonly idleTimeoutMs: number;
}

interface Waiter<C> {
  resolve(client: C): void;
  reject(error: unknown): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * At most `maxSize` connections; callers wait first come, first served, each within its timeout;
 * the idle ones are handed out most recently used first (the others stay idle, to be closed by the
 * pool's one timer once past idle-timeout); a connection given back broken is closed and another
 * opened for a waiting caller; `close` ends the idle ones and waits for those held.
 */
export class PostgresClients<C extends object> {
  readonly #settings: ClientsSettings;
  readonly #factory: ClientFactory<C>;
  /** Idle connections, the longest idle first. */
  readonly #idle: C[] = [];
  /** When each was last given back whole. */
  readonly #since = new WeakMap<C, number>();
  readonly #waiters: Waiter<C>[] = [];
  /** Connections open or being opened. */
  #count = 0;
  /** Connections being opened. */
  #opening = 0;
  #reaper: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Called once nothing is held nor being opened after `close`. */
  #drained: (() => void) | undefined;

  constructor(settings: ClientsSettings, factory: ClientFactory<C>) {
    this.#settings = settings;
    this.#factory = factory;
  }

  /** Idle connections now. */
  get idleCount(): number {
    return this.#idle.length;
  }

  /** Connections open or being opened now. */
  get totalCount(): number {
    return this.#count;
  }

  /** When `client` was last given back whole; undefined for one never given back. */
  idleSince(client: C): number | undefined {
    return this.#since.get(client);
  }

  /**
   * An idle connection at once where no caller waits before this one: no promise, no timer (a
   * timer a call costs more CPU than the rest of the hand-out).
   */
  takeIdle(): C | undefined {
    if (this.#closed || this.#waiters.length > 0) return undefined;
    return this.#idle.pop();
  }

  /** A connection within `timeoutMs`, or the acquire-timeout error naming `namedMs`. */
  acquire(timeoutMs: number, namedMs: number = timeoutMs): Promise<C> {
    if (this.#closed) return Promise.reject(closedError(this.#settings.name));
    const idle = this.takeIdle();
    if (idle !== undefined) return Promise.resolve(idle);
    return new Promise<C>((resolve, reject) => {
      const waiter: Waiter<C> = { resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(timeoutError(this.#settings.name, namedMs));
      }, Math.max(1, timeoutMs));
      this.#waiters.push(waiter);
      this.#grow();
    });
  }

  /** `client` given back: to the first waiting caller, or idle; closed where `broken`. */
  release(client: C, broken = false): void {
    if (broken || this.#closed) {
      this.#drop(client);
      return;
    }
    this.#since.set(client, performance.now());
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      clearTimeout(waiter.timer);
      waiter.resolve(client);
      return;
    }
    this.#idle.push(client);
    this.#reaper ??= setTimeout(this.#reap, this.#settings.idleTimeoutMs);
  }

  /**
   * `client` failed on its own (its server ended the session, the socket closed): closed if idle;
   * one held is closed when given back broken.
   */
  lost(client: C): void {
    const at = this.#idle.indexOf(client);
    if (at < 0) return;
    this.#idle.splice(at, 1);
    this.#drop(client);
  }

  /** Ends the idle connections, fails the waiting callers, and waits for those held to come back. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      clearTimeout(this.#reaper);
      this.#reaper = undefined;
      for (const waiter of this.#waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(closedError(this.#settings.name));
      }
      for (const client of this.#idle.splice(0)) this.#drop(client);
    }
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const before = this.#drained;
      this.#drained = () => {
        before?.();
        resolve();
      };
    });
  }

  #drop(client: C): void {
    this.#count--;
    this.#factory.close(client);
    if (this.#closed) {
      if (this.#count === 0) this.#drained?.();
    } else {
      this.#grow();
    }
  }

  // One connection opened for each caller waiting beyond those already being opened, up to
  // max-size. A failed one fails the longest waiting caller: a database that refuses
  // connections is heard at once, not after acquire-timeout.
  #grow(): void {
    while (this.#waiters.length > this.#opening && this.#count < this.#settings.maxSize) {
      this.#count++;
      this.#opening++;
      this.#factory.open().then(
        (client) => {
          this.#opening--;
          if (this.#closed) this.#drop(client);
          else this.release(client);
        },
        (error: unknown) => {
          this.#opening--;
          this.#count--;
          if (this.#closed) {
            if (this.#count === 0) this.#drained?.();
            return;
          }
          const waiter = this.#waiters.shift();
          if (waiter !== undefined) {
            clearTimeout(waiter.timer);
            waiter.reject(error);
          }
          this.#grow();
        },
      );
    }
  }

  // Closes the connections idle past idle-timeout, the longest idle first, and looks again when
  // the next one will be, while any is idle.
  readonly #reap = (): void => {
    this.#reaper = undefined;
    if (this.#closed) return;
    const now = performance.now();
    const timeout = this.#settings.idleTimeoutMs;
    for (let first = this.#idle[0]; first !== undefined; first = this.#idle[0]) {
      const left = (this.#since.get(first) ?? now) + timeout - now;
      if (left > 0) {
        this.#reaper = setTimeout(this.#reap, Math.max(1, left));
        return;
      }
      this.#idle.shift();
      this.#drop(first);
    }
  };
}
