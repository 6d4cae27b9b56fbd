import { LockNotAcquiredError } from "../lock_not_acquired.ts";
import { MigrationFailure } from "../migration_failure.ts";
import { errorDetail, type SearchClient } from "./search_client.ts";

/** Who holds a lock, as stored in its document. */
export interface LockHolder {
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly acquired_at: string;
  readonly expires_at: string;
}

/** How long a lock lives without renewal: a crashed runner blocks others at most this long. */
export const LOCK_LEASE_MS = 120_000;
const POLL_MS = 250;

interface Versioned {
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/**
 * One connection's migration lock: the document `lock-<connection>` in the records index,
 * created atomically with `_create` (409 when it exists), so two runners cannot both hold it.
 * Lock documents are only ever read by id, which is real-time: no request here waits for a refresh.
 * It names its owner and expires unless renewed; an expired lock is deleted with the sequence
 * numbers it was read with, so only one waiting runner can take it over.
 */
export class SearchLock {
  readonly #client: SearchClient;
  readonly #path: string;
  readonly #connection: string;
  readonly #owner = crypto.randomUUID();
  readonly #identity: { host: string; pid: number };
  #held: Versioned | undefined;
  #renewedAt = 0;
  #acquiredAt = "";

  constructor(
    client: SearchClient,
    index: string,
    connection: string,
    identity: { host: string; pid: number },
  ) {
    this.#client = client;
    this.#connection = connection;
    this.#path = `/${index}/_doc/${encodeURIComponent(`lock-${connection}`)}`;
    this.#identity = identity;
  }

  /** Takes the lock, waiting up to `timeoutMs` while another runner holds it. */
  async acquire(timeoutMs: number, onWait?: (holder: LockHolder) => void): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.#acquiredAt = new Date().toISOString();
    let told = false;
    const create = this.#path.replace("/_doc/", "/_create/");
    for (;;) {
      const created = await this.#client.send("PUT", create, this.#document());
      if (created.status === 201 || created.status === 200) {
        this.#held = versioned(created.body);
        this.#renewedAt = Date.now();
        return;
      }
      if (created.status !== 409) this.#fail(`PUT ${create}`, created.status, created.body);
      const current = await this.#client.send("GET", this.#path);
      if (current.status === 404) continue; // released in between: try again at once
      if (current.status !== 200) this.#fail(`GET ${this.#path}`, current.status, current.body);
      const holder = (current.body as { _source: LockHolder })._source;
      if (Date.parse(holder.expires_at) < Date.now()) {
        const v = versioned(current.body);
        // Only the runner whose delete matches the version read takes over; others see 409.
        await this.#client.send(
          "DELETE",
          `${this.#path}?if_seq_no=${v.seqNo}&if_primary_term=${v.primaryTerm}`,
        );
        continue;
      }
      if (Date.now() >= deadline) {
        throw new LockNotAcquiredError(
          `connection "${this.#connection}" is locked by ${describeHolder(holder)}; ` +
            `waited ${timeoutMs / 1000} s (--lock-timeout). If that runner is gone, run "unlock".`,
        );
      }
      if (!told) onWait?.(holder);
      told = true;
      await new Promise((r) =>
        setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
      );
    }
  }

  /**
   * Extends the lease once a quarter of it has passed (so not a request per file); fails the run
   * when the lock was lost (taken over after expiry).
   */
  async renew(): Promise<void> {
    const held = this.#requireHeld();
    if (Date.now() - this.#renewedAt < LOCK_LEASE_MS / 4) return;
    const path = `${this.#path}?if_seq_no=${held.seqNo}&if_primary_term=${held.primaryTerm}`;
    const response = await this.#client.send("PUT", path, this.#document());
    if (response.status !== 200) {
      this.#fail(`PUT ${this.#path}`, response.status, response.body, "lost the lock");
    }
    this.#held = versioned(response.body);
    this.#renewedAt = Date.now();
  }

  /** Lets go of the lock if this runner holds it. Never throws: it runs on every exit path. */
  async release(): Promise<void> {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    try {
      await this.#client.send(
        "DELETE",
        `${this.#path}?if_seq_no=${held.seqNo}&if_primary_term=${held.primaryTerm}`,
      );
    } catch {
      // The lease runs out on its own.
    }
  }

  /** Deletes the lock whoever holds it (the `unlock` command); returns the holder, if any. */
  async forceRelease(): Promise<LockHolder | undefined> {
    const current = await this.#client.send("GET", this.#path);
    if (current.status === 404) return undefined;
    if (current.status !== 200) this.#fail(`GET ${this.#path}`, current.status, current.body);
    const response = await this.#client.send("DELETE", this.#path);
    if (response.status !== 200 && response.status !== 404) {
      this.#fail(`DELETE ${this.#path}`, response.status, response.body);
    }
    return (current.body as { _source: LockHolder })._source;
  }

  #document(): LockHolder {
    const now = Date.now();
    return {
      owner: this.#owner,
      host: this.#identity.host,
      pid: this.#identity.pid,
      acquired_at: this.#acquiredAt || new Date(now).toISOString(),
      expires_at: new Date(now + LOCK_LEASE_MS).toISOString(),
    };
  }

  #requireHeld(): Versioned {
    if (this.#held === undefined) throw new Error("the lock is not held");
    return this.#held;
  }

  #fail(request: string, status: number, body: unknown, what = "could not take the lock"): never {
    throw new MigrationFailure({
      connection: this.#connection,
      request,
      status,
      reason: `${what}: ${errorDetail(body)}`,
    });
  }
}

function versioned(body: unknown): Versioned {
  const b = body as { _seq_no: number; _primary_term: number };
  return { seqNo: b._seq_no, primaryTerm: b._primary_term };
}

/** `host pid N (owner …), expires at …`. */
export function describeHolder(holder: LockHolder): string {
  return `${holder.host} pid ${holder.pid} (owner ${holder.owner}), expiring ${holder.expires_at}`;
}
