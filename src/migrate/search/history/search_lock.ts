import { type Clock, systemClock, type Timer } from "../../../runtime/clock.ts";
import { pause } from "../../interruption.ts";
import { MigrationError, MigrationFailure } from "../../migration_error.ts";
import { LOCK_POLL_MS } from "../../lock_poll.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../../option_names.ts";
import type { RunnerIdentity } from "../../runner_identity.ts";
import { errorDetail, type SearchClient, type SearchResponse } from "../http/search_client.ts";
import { definedFields } from "../../../defined_fields.ts";

/** Who holds a lock, as stored in its document. */
export interface LockHolder {
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
  readonly acquired_at: string;
  readonly expires_at: string;
}

interface Versioned {
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/** What the lock document says, read with its version. */
interface Observed extends Versioned {
  readonly holder: Partial<Record<keyof LockHolder, unknown>>;
}

/**
 * One connection's migration lock: the document `lock-<connection>` in the records index,
 * created atomically with `_create` (409 when it exists), so two runners cannot both hold it.
 * Lock documents are only ever read by id, which is real-time: no request here waits for a refresh.
 *
 * The holder renews its lease in the background every third of it, while files run; when a
 * renewal finds the lock taken over (or the lease about to run out unrenewed), {@linkcode lost}
 * aborts, and the runner stops without recording the file in flight. A waiting runner takes over a
 * lock whose lease ran out, one whose document is malformed once it has stayed unchanged for a
 * lease, and at once one whose holder ran on this host under a pid that is gone. A takeover
 * deletes the document with the sequence numbers it was read with, so only one runner wins.
 *
 * Its time (the lease, the expiry of other runners' locks, the wait for the lock) is its
 * {@linkcode Clock}'s: the system's, or a test's that runs a lease in virtual time.
 */
export class SearchLock {
  readonly #client: SearchClient;
  readonly #path: string;
  readonly #connection: string;
  readonly #owner = crypto.randomUUID();
  readonly #identity: RunnerIdentity;
  readonly #leaseMs: number;
  readonly #clock: Clock;
  readonly #optionNames: OptionNames;
  #held: Versioned | undefined;
  #acquiredAt = "";
  // The next renewal, and the moment this runner gives up the lock unless renewed before.
  #timer: Timer | undefined;
  #deadline: Timer | undefined;
  // Aborts the renewal in flight (on release, or when the deadline passes).
  #renewal: AbortController | undefined;
  #lost = new AbortController();

  constructor(
    client: SearchClient,
    index: string,
    connection: string,
    identity: RunnerIdentity,
    leaseMs: number,
    clock: Clock = systemClock,
    optionNames: OptionNames = COMMAND_LINE_NAMES,
  ) {
    this.#optionNames = optionNames;
    this.#client = client;
    this.#connection = connection;
    this.#path = `/${index}/_doc/${encodeURIComponent(`lock-${connection}`)}`;
    this.#identity = identity;
    this.#leaseMs = leaseMs;
    this.#clock = clock;
  }

  /** Aborts, with a {@linkcode MigrationFailure} as its reason, when the lock was lost. */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /**
   * Takes the lock, waiting up to `timeoutMs` while another runner holds it, one look every
   * {@linkcode LOCK_POLL_MS}. `signal` (Ctrl-C) ends the wait at once. When it fails, a lock of
   * its own that landed unanswered is removed.
   */
  async acquire(
    timeoutMs: number,
    onWait?: (holder: LockHolder) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      return await this.#acquire(timeoutMs, onWait, signal);
    } catch (error) {
      // A _create whose answer was lost (a silent host, Ctrl-C) may have landed: a lock of ours
      // left there would block every other runner for a lease.
      await this.#removeOwn();
      // A request cut short by Ctrl-C ends the wait like the pause between two looks.
      if (signal?.aborted) {
        throw new MigrationError("interrupted", "interrupted while waiting for the lock");
      }
      throw error;
    }
  }

  // Never throws: it runs while another error is on its way out.
  async #removeOwn(): Promise<void> {
    try {
      const current = await this.#read();
      if (current?.holder.owner !== this.#owner) return;
      await this.#client.send("DELETE", this.#conditional(current), undefined, {
        repeatable: true,
      });
    } catch {
      // The lease runs out on its own.
    }
  }

  async #acquire(
    timeoutMs: number,
    onWait: ((holder: LockHolder) => void) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const deadline = this.#clock.now() + timeoutMs;
    const create = this.#path.replace("/_doc/", "/_create/");
    // A malformed lock, and since when it has not changed.
    let malformed: { version: string; since: number } | undefined;
    let told = false;
    let again = false; // one immediate retry after a takeover or a release seen in between
    for (;;) {
      signal?.throwIfAborted();
      // Repeatable: a second _create after a lost answer gets 409 and finds its own owner below.
      const writtenAt = this.#clock.now();
      this.#acquiredAt = new Date(writtenAt).toISOString();
      const created = await this.#client.send("PUT", create, this.#document(writtenAt), {
        repeatable: true,
        signal,
      });
      let busy: string | undefined;
      if (created.status === 201 || created.status === 200) {
        return this.#hold(this.#versioned(created, `PUT ${create}`), writtenAt);
      } else if (created.status === 409) {
        const current = await this.#readUnlessBusy(signal);
        if (typeof current === "string") {
          busy = current;
        } else if (current === undefined) {
          // Released in between: try again at once, but only once in a row.
          if (!again) {
            again = true;
            continue;
          }
        } else if (current.holder.owner === this.#owner) {
          return this.#hold(current, this.#writtenBy(current)); // our own _create, answered elsewhere
        } else {
          const expired = this.#expired(current, malformed);
          if (expired === "malformed") {
            const version = `${current.seqNo}/${current.primaryTerm}`;
            if (malformed?.version !== version) malformed = { version, since: this.#clock.now() };
          }
          if (expired === true) {
            if (await this.#takeOver(current, signal) && !again) {
              again = true;
              continue;
            }
          } else if (!told) {
            told = true;
            onWait?.(holderOf(current.holder));
          }
          busy = describeHolder(holderOf(current.holder));
        }
      } else if (!transient(created.status)) {
        this.#fail(`PUT ${create}`, created.status, created.body);
      } else {
        busy = busyCluster(created);
      }
      again = false;
      if (this.#clock.now() >= deadline) {
        throw new MigrationError(
          "lock",
          `connection "${this.#connection}" is locked by ${busy ?? "another runner"}; ` +
            `waited ${timeoutMs / 1000} s (${this.#optionNames.lockTimeout}). If that runner is ` +
            `gone, run ${this.#optionNames.invocation("unlock", ["force"])}.`,
        );
      }
      await pause(
        Math.min(LOCK_POLL_MS, deadline - this.#clock.now()),
        signal,
        "waiting for the lock",
        this.#clock,
      );
    }
  }

  /** Lets go of the lock if this runner holds it. Never throws: it runs on every exit path. */
  async release(): Promise<void> {
    this.#stopTimers();
    this.#renewal?.abort();
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    try {
      const deleted = await this.#client.send("DELETE", this.#conditional(held), undefined, {
        repeatable: true,
      });
      if (deleted.status !== 409) return;
      // A renewal that was in flight landed first: the lock is still ours, one version on.
      const current = await this.#read();
      if (current?.holder.owner !== this.#owner) return;
      await this.#client.send("DELETE", this.#conditional(current), undefined, {
        repeatable: true,
      });
    } catch {
      // The lease runs out on its own.
    }
  }

  /**
   * Deletes the lock (the `unlock` command), with the version it read, so the holder it returns
   * is the one it removed; `undefined` when there was none. A lock whose lease has not run out,
   * held by a process not known gone, is a live runner's: removing it would let a second runner
   * drive the same files (a reindex among them), so it throws a `lock` MigrationError naming the
   * holder, unless `force`. A lock without a readable expiry is removed: nothing says it is live.
   */
  async remove(force: boolean): Promise<LockHolder | undefined> {
    for (;;) {
      const current = await this.#read();
      if (current === undefined) return undefined;
      if (!force && this.#expired(current, undefined) === false) {
        throw new MigrationError(
          "lock",
          `connection "${this.#connection}": the lock of ` +
            `${describeHolder(holderOf(current.holder))} is live (its runner renews the lease); ` +
            `"unlock" removes only a lock whose runner is gone. Wait for it to finish, or run ` +
            `${this.#optionNames.invocation("unlock", ["force"])} if you know ` +
            "that runner is gone.",
        );
      }
      const path = this.#conditional(current);
      const response = await this.#client.send("DELETE", path, undefined, { repeatable: true });
      if (response.status === 200) return holderOf(current.holder);
      if (response.status === 404) return undefined;
      // 409: renewed or taken over since it was read; remove what is there now.
      if (response.status !== 409) {
        this.#fail(`DELETE ${this.#path}`, response.status, response.body);
      }
    }
  }

  /** The lock document with its version, `undefined` when there is none. */
  async #read(signal?: AbortSignal): Promise<Observed | undefined> {
    const response = await this.#client.send("GET", this.#path, undefined, { signal });
    if (response.status === 404) return undefined;
    if (response.status !== 200) this.#fail(`GET ${this.#path}`, response.status, response.body);
    const source = (response.body as { _source?: unknown })._source;
    return {
      ...this.#versioned(response, `GET ${this.#path}`),
      holder: source !== null && typeof source === "object" ? source : {},
    };
  }

  /** As {@linkcode SearchLock.#read}, but a busy cluster (429, 5xx) is said, not thrown. */
  async #readUnlessBusy(signal?: AbortSignal): Promise<Observed | undefined | string> {
    try {
      return await this.#read(signal);
    } catch (error) {
      const status = error instanceof MigrationFailure ? error.detail.status : undefined;
      if (status === undefined || !transient(status)) throw error;
      return `the cluster (${(error as MigrationFailure).detail.reason}, HTTP ${status})`;
    }
  }

  /**
   * Whether the lock may be taken over: `true`, `false`, or `"malformed"` while a lock without a
   * readable expiry has not yet stayed unchanged for a lease.
   */
  #expired(
    current: Observed,
    malformed: { version: string; since: number } | undefined,
  ): boolean | "malformed" {
    const { host, pid, expires_at } = current.holder;
    if (
      host === this.#identity.host && typeof pid === "number" && pid !== this.#identity.pid &&
      this.#identity.processGone?.(pid) === true
    ) {
      return true;
    }
    const expires = typeof expires_at === "string" ? Date.parse(expires_at) : NaN;
    if (!Number.isNaN(expires)) return expires < this.#clock.now();
    const version = `${current.seqNo}/${current.primaryTerm}`;
    if (malformed?.version === version && this.#clock.now() - malformed.since >= this.#leaseMs) {
      return true;
    }
    return "malformed";
  }

  /** Deletes an expired lock as read; true when this runner's delete removed it. */
  async #takeOver(current: Observed, signal: AbortSignal | undefined): Promise<boolean> {
    const path = this.#conditional(current);
    const deleted = await this.#client.send("DELETE", path, undefined, {
      repeatable: true,
      signal,
    });
    if (deleted.status === 200) return true;
    // Another runner took it over (or released it) first.
    if (deleted.status === 404 || deleted.status === 409 || transient(deleted.status)) return false;
    this.#fail(
      `DELETE ${this.#path}`,
      deleted.status,
      deleted.body,
      `the lock of ${describeHolder(holderOf(current.holder))} has expired, but removing it ` +
        `was refused (this user needs the right to delete documents of the records index)`,
    );
  }

  #hold(version: Versioned, writtenAt: number): void {
    this.#held = version;
    this.#lost = new AbortController();
    this.#renewed(version, writtenAt);
  }

  // A renewal every third of the lease; the lock is given up at three quarters of it unless a
  // renewal succeeded by then, whatever a renewal in flight is still waiting for, so that this
  // runner stops before another one may take the lock over.
  #renewed(version: Versioned, writtenAt: number, soon = false): void {
    this.#held = version;
    this.#deadline?.cancel();
    this.#deadline = this.#clock.after(
      writtenAt + (this.#leaseMs * 3) / 4 - this.#clock.now(),
      () =>
        this.#lose(
          this.#failure(
            `PUT ${this.#path}`,
            undefined,
            `could not renew the lock within ${(this.#leaseMs * 3) / 4000} s (3/4 of ` +
              `migrations.lock_lease); another runner may take it over`,
          ),
        ),
    );
    this.#scheduleRenewal(soon);
  }

  // A third of the lease after a renewal; a twelfth after a failed one, or after one that found
  // an older document of its own, so that there are more tries before the deadline.
  #scheduleRenewal(soon = false): void {
    this.#timer?.cancel();
    this.#timer = this.#clock.after(this.#leaseMs / (soon ? 12 : 3), () => this.#renew());
  }

  #stopTimers(): void {
    this.#timer?.cancel();
    this.#deadline?.cancel();
    this.#timer = this.#deadline = undefined;
  }

  #lose(reason: MigrationFailure): void {
    if (this.#held === undefined) return;
    this.#held = undefined;
    this.#stopTimers();
    this.#renewal?.abort();
    this.#lost.abort(reason);
  }

  // Runs in the background while files run; never throws. A failed renewal is tried again a
  // third of the lease later, until the deadline gives the lock up.
  async #renew(): Promise<void> {
    const held = this.#held;
    if (held === undefined) return;
    const request = `PUT ${this.#path}`;
    const controller = new AbortController();
    this.#renewal = controller;
    const writtenAt = this.#clock.now();
    try {
      const response = await this.#client.send(
        "PUT",
        this.#conditional(held),
        this.#document(writtenAt),
        { repeatable: true, signal: controller.signal },
      );
      if (this.#held !== held) return; // released or given up meanwhile
      if (response.status === 200 || response.status === 201) {
        return this.#renewed(this.#versioned(response, request), writtenAt);
      }
      if (response.status === 409 || response.status === 404) {
        // Our own renewal may have gone through on a host that did not answer: look.
        const current = await this.#read(controller.signal);
        if (this.#held !== held) return;
        // Its lease runs from when that document was written, perhaps by an earlier renewal.
        if (current?.holder.owner === this.#owner) {
          return this.#renewed(current, this.#writtenBy(current), true);
        }
        return this.#lose(this.#failure(
          request,
          response.status,
          current === undefined
            ? 'lost the lock: its document was deleted ("unlock", or a runner that took it over)'
            : `lost the lock: it was taken over by ${describeHolder(holderOf(current.holder))}`,
        ));
      }
    } catch {
      // Unreachable or cut short: tried again below, until the deadline.
    } finally {
      if (this.#renewal === controller) this.#renewal = undefined;
    }
    if (this.#held === held) this.#scheduleRenewal(true);
  }

  // When a document of ours was written, from its expiry: our own clock wrote both.
  #writtenBy(current: Observed): number {
    const expires = Date.parse(String(current.holder.expires_at));
    return Number.isNaN(expires) ? this.#clock.now() : expires - this.#leaseMs;
  }

  #conditional(v: Versioned): string {
    return `${this.#path}?if_seq_no=${v.seqNo}&if_primary_term=${v.primaryTerm}`;
  }

  #document(now: number): LockHolder {
    return {
      owner: this.#owner,
      host: this.#identity.host,
      pid: this.#identity.pid,
      acquired_at: this.#acquiredAt,
      expires_at: new Date(now + this.#leaseMs).toISOString(),
    };
  }

  #failure(request: string, status: number | undefined, reason: string): MigrationFailure {
    return new MigrationFailure({
      connection: this.#connection,
      request,
      ...definedFields({ status }),
      reason,
    });
  }

  #versioned(response: SearchResponse, request: string): Versioned {
    const b = response.body as { _seq_no?: unknown; _primary_term?: unknown } | undefined;
    if (typeof b?._seq_no !== "number" || typeof b._primary_term !== "number") {
      this.#fail(request, response.status, response.body, "the answer has no _seq_no");
    }
    return { seqNo: b._seq_no, primaryTerm: b._primary_term };
  }

  #fail(request: string, status: number, body: unknown, what = "could not take the lock"): never {
    throw this.#failure(request, status, `${what}: ${errorDetail(body)}`);
  }
}

/** How a busy cluster is named while the runner waits for the lock. */
function busyCluster(response: SearchResponse): string {
  return `the cluster (HTTP ${response.status}: ${errorDetail(response.body)})`;
}

// Overloaded or starting up: worth another look at the next poll.
function transient(status: number): boolean {
  return status === 429 || status >= 500;
}

function holderOf(source: Partial<Record<keyof LockHolder, unknown>>): LockHolder {
  const text = (v: unknown) => typeof v === "string" ? v : "?";
  return {
    owner: text(source.owner),
    host: text(source.host),
    pid: typeof source.pid === "number" ? source.pid : -1,
    acquired_at: text(source.acquired_at),
    expires_at: text(source.expires_at),
  };
}

/** `host pid N (owner …), expires at …`. */
export function describeHolder(holder: LockHolder): string {
  return `${holder.host} pid ${holder.pid} (owner ${holder.owner}), expiring ${holder.expires_at}`;
}
