// One consumer of a listener's group, its membership: it joins, is given partitions, runs each
// partition's records in order on a lane of its own (partitions in parallel), and leaves. A
// rebalance waits for the lanes (group_guard.ts); the close too. Its fetches are
// partition_fetcher.ts's, its commits offset_commits.ts's.
import type { Consumer, GroupAssignment } from "@platformatic/kafka";
import { Backoff } from "../../runtime/backoff.ts";
import type { ContextLogger } from "../../context/class_record.ts";
import { loggable } from "../../observe/loggable.ts";
import { securityFailure } from "../security_failure.ts";
import type { KafkaClientModule, KafkaClientOptions } from "./kafka_client.ts";
import { closeConnections } from "../client_connections.ts";
import { Generation } from "./generation.ts";
import { guardGroup } from "./group_guard.ts";
import type { KafkaRecord } from "./kafka_record.ts";
import { OffsetCommits } from "./offset_commits.ts";
import { PartitionFetcher, QUEUE_HIGH } from "./partition_fetcher.ts";
import { type LaneWork, PartitionLane } from "./partition_lane.ts";
import { SessionWatch } from "./session_watch.ts";
import { subscriptionAssigner } from "./subscription_assigner.ts";

// After a failed join: 0.5 s, doubling, at most 5 s.
const JOIN_BACKOFF = /* @__PURE__ */ new Backoff({ delay: 500, multiplier: 2, maxDelay: 5000 });

/** How a member joins its group and fetches. */
export interface MemberSettings {
  readonly client: KafkaClientModule;
  readonly clientOptions: KafkaClientOptions;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly autoOffsetReset: "earliest" | "latest" | "none";
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  /** Records of a batch listener's call at most; 1 for a record listener. */
  readonly batch: number;
  /** `Class.method`, for log lines. */
  readonly where: string;
  readonly logger: ContextLogger;
}

// A promise that never settles: a join held for good. A new one each time, which goes with the
// join it holds; one kept for all would keep every held join's closures for good.
const held = (): Promise<void> => new Promise(() => {});
// Past the close's deadline, the last commit and the leave of the group get this long each before
// the member's connections are cut: a broker that does not answer must not hold the shutdown.
const GRACE_MS = 5000;

/** One consumer of the group. */
export class ListenerMember {
  readonly #settings: MemberSettings;
  readonly #work: LaneWork;
  #consumer: Consumer;
  readonly #pool: InstanceType<KafkaClientModule["ConnectionPool"]>;
  readonly #watch: SessionWatch;
  readonly #fetcher: PartitionFetcher;
  readonly #commits: OffsetCommits;
  #generation: Generation | undefined;
  #revoking: Promise<void> | undefined;
  // "leaving" once the close ends the generation: no join goes from then on.
  #phase: "open" | "closing" | "leaving" = "open";
  #loop: Promise<void> | undefined;
  #starting: Promise<void> | undefined;
  // The generation a revocation is waiting on, until it ended.
  #ending: Generation | undefined;
  // Ends the pause between two joins: the member closes.
  #stopPause: (() => void) | undefined;

  constructor(settings: MemberSettings, work: LaneWork) {
    this.#settings = settings;
    this.#work = work;
    // Fetches wait on the broker: apart from the group's requests, which must not queue behind.
    this.#pool = new settings.client.ConnectionPool(
      settings.clientOptions.clientId,
      settings.clientOptions,
    );
    this.#watch = new SessionWatch(settings.sessionTimeoutMs);
    const consumer = () => this.#consumer;
    this.#fetcher = new PartitionFetcher(settings, consumer, this.#pool);
    this.#commits = new OffsetCommits(settings, consumer);
    this.#consumer = this.#open();
  }

  // A consumer of the group, its requests guarded (group_guard.ts); its events count only while
  // it is the member's.
  #open(): Consumer {
    const { client, clientOptions, groupId, logger, where } = this.#settings;
    const consumer = new client.Consumer({
      ...clientOptions,
      groupId,
      autocommit: false,
      sessionTimeout: this.#settings.sessionTimeoutMs,
      heartbeatInterval: this.#settings.heartbeatIntervalMs,
      rebalanceTimeout: this.#settings.rebalanceTimeoutMs,
      partitionAssigner: subscriptionAssigner,
      // As Java's consumer (allow.auto.create.topics): a topic not made yet is made as the group
      // asks for it, where the broker's auto.create.topics.enable allows.
      autocreateTopics: true,
    });
    const current = () => consumer === this.#consumer;
    guardGroup(client, consumer, {
      // A join held while the records finish (up to the session timeout) is sent with the
      // session timeout ahead of it.
      before: () =>
        current()
          ? this.#beforeJoin().then(() => this.#watch.beat())
          // A consumer replaced (renewal) must not join again: it would hold partitions nobody
          // runs.
          : Promise.reject(new Error("this consumer was replaced")),
      started: () => this.#watch.joinStarted(),
      ended: () => this.#watch.joinEnded(current()),
    });
    // A rejoin that failed for good is said as an `error` event, which with no listener would end
    // the process.
    consumer.on("error", (error: unknown) => {
      if (current()) {
        logger.error(`${where}: the consumer of group "${groupId}" failed`, loggable(error));
      }
    });
    consumer.on("consumer:heartbeat:end", () => {
      if (current()) this.#watch.beat();
    });
    consumer.on("consumer:group:join", (payload) => {
      if (!current()) return;
      this.#watch.beat();
      this.#assigned(payload.generationId ?? consumer.generationId, payload.assignments);
    });
    return consumer;
  }

  /** The member id the group gave (for tests and log lines). */
  get memberId(): string | null {
    return this.#consumer.memberId;
  }

  /**
   * Joins the group, trying again until it joined or the member closes (a broker not up yet, a
   * network that blinked); its records then run until `close`.
   */
  async start(): Promise<void> {
    this.#starting = this.#joinUntilJoined("");
    await this.#starting;
    // A close that came during the join must not leave a timer behind it. A member whose
    // heartbeats have failed for a session timeout, with no rebalance of its own under way, starts
    // over with a new consumer, which looks the coordinator up again; so does one that the
    // client's failed rejoin left with no generation (it sends no heartbeat, and joins no more).
    if (this.#phase === "open") {
      this.#watch.start(
        this.#settings.heartbeatIntervalMs,
        () => this.#phase !== "open" || this.#revoking !== undefined,
        () => this.#renew(),
      );
    }
  }

  async #join(): Promise<void> {
    for (const topic of this.#settings.topics) this.#consumer.topics.track(topic);
    this.#watch.beat();
    await this.#consumer.joinGroup({});
  }

  async #renew(): Promise<void> {
    const { logger, where, groupId, sessionTimeoutMs } = this.#settings;
    (logger.warn ?? logger.error).call(
      logger,
      `${where}: no heartbeat of group "${groupId}" answered for ${sessionTimeoutMs} ms (the ` +
        `session timeout); joining again with a new consumer`,
    );
    // The group dropped the member already: nothing to wait for, and its commits cannot succeed.
    await this.#revoke(Date.now(), "the loss of the group", 0);
    const old = this.#consumer;
    this.#consumer = this.#open();
    void closeQuietly(old);
    await this.#joinUntilJoined(" again");
  }

  // Joins; after a failure tries again, with a new consumer, 0.5 s later, doubling to 5 s, until
  // it joined or the member closes. The first failure and every tenth are logged, with why: as an
  // error when the brokers refused the client's credentials or certificate, which no wait mends.
  async #joinUntilJoined(again: "" | " again"): Promise<void> {
    const { logger, where, groupId } = this.#settings;
    for (let failures = 0; this.#phase === "open"; failures++) {
      try {
        await this.#join();
        return;
      } catch (error) {
        if (this.#phase !== "open") return;
        if (failures % 10 === 0) {
          const why = securityFailure(error, this.#settings.clientOptions);
          (why === undefined ? logger.warn ?? logger.error : logger.error).call(
            logger,
            `${where}: joining group "${groupId}"${again} failed` +
              `${why === undefined ? "" : ` (${why})`}; trying again`,
            loggable(error),
          );
        }
        // A consumer keeps the first coordinator it was told, even one that is down while the
        // cluster moves the group: each attempt asks again with a consumer of its own.
        const failed = this.#consumer;
        this.#consumer = this.#open();
        void closeQuietly(failed);
        await this.#pauseJoin(JOIN_BACKOFF.delayOf(failures + 1));
      }
    }
  }

  // Waits `ms` before the next join, or until the member closes.
  #pauseJoin(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#stopPause = undefined;
        resolve();
      }, ms);
      this.#stopPause = () => {
        clearTimeout(timer);
        this.#stopPause = undefined;
        resolve();
      };
    });
  }

  /**
   * Stops fetching, lets the records running finish until `deadline` (a `Date.now()` value),
   * commits what finished and leaves the group. Answers the records given up at the deadline.
   * It ends by the deadline and a grace for the commit and the leave, whatever the broker does:
   * a member that could not leave is dropped by the group after its session timeout.
   */
  async close(deadline: number): Promise<readonly KafkaRecord[]> {
    this.#phase = "closing";
    this.#watch.stop();
    this.#stopPause?.();
    const { logger, where, groupId } = this.#settings;
    // A join or a renewal under way waits on the broker; a rebalance's revocation on its records.
    await settle(
      Promise.allSettled([this.#starting, this.#watch.renewal, this.#revoking]),
      deadline,
    );
    // A rebalance's revocation still waiting holds the generation: the close reports its records.
    const ending = this.#generation === undefined ? this.#ending : undefined;
    this.#phase = "leaving";
    const left = ending === undefined
      ? await this.#revoke(deadline, "the close", GRACE_MS)
      : this.#givenUp(ending, "the close");
    const leaveBy = Math.max(deadline, Date.now()) + GRACE_MS;
    // The leave does not wait for the fetch loop: a fetch runs on the member's own connections,
    // and one that hangs (its leader not answering) must not keep the member in the group.
    const leave = await settle(this.#consumer.close(), leaveBy);
    if (leave !== true) {
      logger.error(
        `${where}: leaving group "${groupId}" ${
          "timedOut" in leave ? "did not end in time" : "failed"
        }; its connections are cut, and the group drops the member after its session timeout`,
        ...("error" in leave ? [loggable(leave.error)] : []),
      );
      // The client takes a second close for done while its first waits: the connections are
      // closed here.
      await settle(closeConnections(this.#consumer), Date.now() + GRACE_MS);
    }
    await settle(this.#pool.close(), Date.now() + GRACE_MS);
    // A fetch still under way fails once its connections are closed, and the loop ends.
    await settle(this.#loop, Date.now() + GRACE_MS);
    return left;
  }

  // Before a JoinGroup: a join while no records run (the first, a retry) goes at once; a rejoin
  // waits for the lanes, so that the partitions move only once their records finished. The
  // client sends no heartbeat meanwhile: the wait stays within the session timeout (and the
  // rebalance timeout), with room for the commit, or the group would drop the member and give
  // its partitions away while its records still run.
  #beforeJoin(): Promise<void> {
    // A rejoin while the member leaves (another member joined meanwhile) never goes, as Java's
    // consumer rejoins only in a poll: the partitions stay here until the close's records
    // finished, were committed and the member left; the group then goes on without it. Held, not
    // failed: the client would try a failed join again, with timers that outlive the close.
    if (this.#phase === "leaving") return held();
    if (this.#generation === undefined) return Promise.resolve();
    // A join the commit of the revocation started (the member was dropped) goes at once: the
    // revocation waits for that commit, with its bound.
    if (this.#revoking !== undefined) return Promise.resolve();
    const { sessionTimeoutMs, rebalanceTimeoutMs } = this.#settings;
    const window = Math.min(sessionTimeoutMs, rebalanceTimeoutMs);
    this.#revoking = this.#revoke(
      Date.now() + Math.max(window / 2, window - 5000),
      "a rebalance",
      Math.min(2000, window / 4),
    ).then(() => {}, () => {}).finally(() => {
      this.#revoking = undefined;
    });
    return this.#revoking.then(() => this.#phase === "leaving" ? held() : undefined);
  }

  // Ends the generation: stops the lanes, waits for the records running (until `deadline`),
  // commits what finished, then marks every lane revoked.
  async #revoke(
    deadline: number,
    why: string,
    commitMs: number,
  ): Promise<readonly KafkaRecord[]> {
    const generation = this.#generation;
    if (generation === undefined) return [];
    this.#generation = undefined;
    this.#ending = generation;
    generation.end();
    const lanes = [...generation.lanes.values()];
    for (const lane of lanes) lane.stop();
    await settle(Promise.all(lanes.map((lane) => lane.idle())), deadline);
    const left = this.#givenUp(generation, why);
    await settle(this.#commits.commit(lanes, true), Math.max(deadline, Date.now()) + commitMs);
    for (const lane of lanes) lane.revoke();
    if (this.#ending === generation) this.#ending = undefined;
    return left;
  }

  // The records of `generation` still running, each said in the log: given up at `why`.
  #givenUp(generation: Generation, why: string): readonly KafkaRecord[] {
    const { logger, where } = this.#settings;
    const left = [...generation.lanes.values()].flatMap((lane) =>
      lane.running === undefined ? [] : [lane.running]
    );
    for (const record of left) {
      (logger.warn ?? logger.error).call(
        logger,
        `${where}: still running at ${why} on ${record.topic} partition ${record.partition} ` +
          `offset ${record.offset}; given up: its offset is not committed, the group delivers ` +
          `it again`,
      );
    }
    return left;
  }

  // The group gave this member `assignments`: lanes for them, their offsets, then the fetches.
  #assigned(id: number, assignments: readonly GroupAssignment[] | undefined): void {
    if (this.#phase !== "open") return;
    // Two joins at once (the client's rejoins after a heartbeat and after a commit) share one
    // JoinGroup, and the client says its generation once for each: a second generation of the
    // same id would leave the first one's lanes running and never committed.
    if (this.#generation?.id === id) return;
    const generation = new Generation(id);
    for (const { topic, partitions } of assignments ?? []) {
      for (const partition of partitions) {
        generation.lanes.set(
          `${topic}:${partition}`,
          new PartitionLane(
            topic,
            partition,
            this.#work,
            this.#settings.batch,
            () => this.#commits.request(generation, () => this.#generation),
            () => generation.wake(),
            QUEUE_HIGH / 2,
          ),
        );
      }
    }
    this.#generation = generation;
    const previous = this.#loop ?? Promise.resolve();
    this.#loop = previous.then(() => this.#fetcher.run(generation, () => this.#phase !== "open"));
  }
}

// Closes a consumer left behind, whatever state it is in. When it cannot leave its group (its
// coordinator is gone), its close fails before its connections close: they are closed here.
async function closeQuietly(consumer: Consumer): Promise<void> {
  try {
    await consumer.close(true);
  } catch {
    await closeConnections(consumer);
  }
}

// True once `promise` fulfilled, its error once it rejected, or a time-out once `deadline` passed.
async function settle(
  promise: Promise<unknown> | undefined,
  deadline: number,
): Promise<true | { readonly error: unknown } | { readonly timedOut: true }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      Promise.resolve(promise).then(() => true as const, (error: unknown) => ({ error })),
      new Promise<{ readonly timedOut: true }>((resolve) => {
        timer = setTimeout(() => resolve({ timedOut: true }), Math.max(0, deadline - Date.now()));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
