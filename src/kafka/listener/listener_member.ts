// One consumer of a listener's group: it joins, is given partitions, fetches them, runs each
// partition's records in order on a lane of its own (partitions in parallel), and commits what
// the lanes finished. A rebalance waits for the lanes (group_guard.ts); the close too.
import type { Consumer, GroupAssignment } from "@platformatic/kafka";
import type { ContextLogger } from "../../context/class_record.ts";
import { loggable } from "../../observe/loggable.ts";
import { securityFailure } from "../security_failure.ts";
import type { KafkaClientModule, KafkaClientOptions } from "./kafka_client.ts";
import { closeConnections } from "../client_connections.ts";
import { guardGroup } from "./group_guard.ts";
import { type KafkaRecord, kafkaRecord } from "./kafka_record.ts";
import { type LaneWork, PartitionLane } from "./partition_lane.ts";
import { subscriptionAssigner } from "./subscription_assigner.ts";

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

// A lane holds at most this many fetched records: a partition whose records wait (a retry) is
// not fetched further, and the others go on.
const QUEUE_HIGH = 500;
// A fetch waits this long for records at most: the loop then sees a stop or a lane with room.
const FETCH_WAIT_MS = 500;
const PARTITION_MAX_BYTES = 1 << 20;
const IS_CONTROL = 1 << 5;
// A record batch's attribute bit: its timestamps are the broker's (LogAppendTime).
const LOG_APPEND_TIME = 1 << 3;
const OFFSET_OUT_OF_RANGE = 1;
// A promise that never settles: a join held for good. A new one each time, which goes with the
// join it holds; one kept for all would keep every held join's closures for good.
const held = (): Promise<void> => new Promise(() => {});
// Past the close's deadline, the last commit and the leave of the group get this long each before
// the member's connections are cut: a broker that does not answer must not hold the shutdown.
const GRACE_MS = 5000;

// The records of one assignment of the group; the next join makes another.
interface Generation {
  readonly id: number;
  readonly lanes: Map<string, PartitionLane>;
  active: boolean;
  // Ends the fetch loop's pause: a lane has room again, or the generation ended.
  sleeper: (() => void) | undefined;
}

function wake(generation: Generation): void {
  const sleeper = generation.sleeper;
  generation.sleeper = undefined;
  sleeper?.();
}

// Waits `ms`, or until the generation is woken.
function pause(generation: Generation, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      generation.sleeper = undefined;
      resolve();
    };
    const timer = setTimeout(done, ms);
    generation.sleeper = done;
  });
}

/** One consumer of the group. */
export class ListenerMember {
  readonly #settings: MemberSettings;
  readonly #work: LaneWork;
  #consumer: Consumer;
  readonly #pool: InstanceType<KafkaClientModule["ConnectionPool"]>;
  #generation: Generation | undefined;
  #revoking: Promise<void> | undefined;
  #committing: Promise<void> | undefined;
  #commitAgain = false;
  #closing = false;
  #loop: Promise<void> | undefined;
  // The last sign of life of the group: a heartbeat answered, a join.
  #lastBeat = Date.now();
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #renewal: Promise<void> | undefined;
  #starting: Promise<void> | undefined;
  // The generation a revocation is waiting on, until it ended.
  #ending: Generation | undefined;
  // Set once the close ends the generation: no join goes from then on.
  #leaving = false;
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
    guardGroup(client, consumer, () =>
      current()
        ? this.#beforeJoin()
        // A consumer replaced (renewal) must not join again: it would hold partitions nobody runs.
        : Promise.reject(new Error("this consumer was replaced")));
    // A rejoin that failed for good is said as an `error` event, which with no listener would end
    // the process.
    consumer.on("error", (error: unknown) => {
      if (current()) {
        logger.error(`${where}: the consumer of group "${groupId}" failed`, loggable(error));
      }
    });
    consumer.on("consumer:heartbeat:end", () => {
      if (current()) this.#lastBeat = Date.now();
    });
    consumer.on("consumer:group:join", (payload) => {
      if (!current()) return;
      this.#lastBeat = Date.now();
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
    // A close that came during the join must not leave a timer behind it.
    if (!this.#closing) {
      this.#watchdog ??= setInterval(() => this.#watch(), this.#settings.heartbeatIntervalMs);
    }
  }

  async #join(): Promise<void> {
    for (const topic of this.#settings.topics) this.#consumer.topics.track(topic);
    this.#lastBeat = Date.now();
    await this.#consumer.joinGroup({});
  }

  // The client keeps the group's coordinator for good: when that broker dies, every heartbeat
  // and commit goes to it and fails, while the group, on its new coordinator, drops the member.
  // A member whose heartbeats have failed for a session timeout, with no rebalance of its own
  // under way, starts over with a new consumer, which looks the coordinator up again.
  #watch(): void {
    if (
      this.#closing || this.#renewal !== undefined || this.#revoking !== undefined ||
      this.#generation === undefined ||
      Date.now() - this.#lastBeat <= this.#settings.sessionTimeoutMs
    ) return;
    this.#renewal = this.#renew().finally(() => {
      this.#renewal = undefined;
    });
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
    for (let failures = 0; !this.#closing; failures++) {
      try {
        await this.#join();
        return;
      } catch (error) {
        if (this.#closing) return;
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
        await this.#pauseJoin(Math.min(500 * 2 ** failures, 5000));
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
    this.#closing = true;
    clearInterval(this.#watchdog);
    this.#stopPause?.();
    const { logger, where, groupId } = this.#settings;
    // A join or a renewal under way waits on the broker; a rebalance's revocation on its records.
    await settle(Promise.allSettled([this.#starting, this.#renewal, this.#revoking]), deadline);
    // A rebalance's revocation still waiting holds the generation: the close reports its records.
    const ending = this.#generation === undefined ? this.#ending : undefined;
    this.#leaving = true;
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
    if (this.#leaving) return held();
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
    return this.#revoking.then(() => this.#leaving ? held() : undefined);
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
    generation.active = false;
    wake(generation);
    const lanes = [...generation.lanes.values()];
    for (const lane of lanes) lane.stop();
    await settle(Promise.all(lanes.map((lane) => lane.idle())), deadline);
    const left = this.#givenUp(generation, why);
    await settle(this.#commit(lanes, true), Math.max(deadline, Date.now()) + commitMs);
    for (const lane of lanes) lane.revoked = true;
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
    if (this.#closing) return;
    const generation: Generation = { id, lanes: new Map(), active: true, sleeper: undefined };
    for (const { topic, partitions } of assignments ?? []) {
      for (const partition of partitions) {
        generation.lanes.set(
          `${topic}:${partition}`,
          new PartitionLane(
            topic,
            partition,
            this.#work,
            this.#settings.batch,
            () => this.#requestCommit(generation),
            () => wake(generation),
            QUEUE_HIGH / 2,
          ),
        );
      }
    }
    this.#generation = generation;
    const previous = this.#loop ?? Promise.resolve();
    this.#loop = previous.then(() => this.#fetchLoop(generation));
  }

  async #fetchLoop(generation: Generation): Promise<void> {
    const { logger, where, groupId } = this.#settings;
    let failures = 0;
    while (generation.active && !this.#closing) {
      try {
        await this.#position(generation);
        const ready = [...generation.lanes.values()].filter((lane) =>
          lane.position !== undefined && lane.queued < QUEUE_HIGH
        );
        if (ready.length === 0) {
          // Every lane is full or waits for its offset: until one drains.
          await pause(generation, generation.lanes.size === 0 ? 60_000 : 1000);
          continue;
        }
        await this.#fetch(generation, ready);
        failures = 0;
      } catch (error) {
        if (!generation.active || this.#closing) break;
        failures += 1;
        this.#consumer.clearMetadata();
        if (failures === 1 || failures % 10 === 0) {
          (logger.warn ?? logger.error).call(
            logger,
            `${where}: fetching for group "${groupId}" failed (${failures} in a row); trying again`,
            loggable(error),
          );
        }
        await pause(generation, Math.min(200 * 2 ** Math.min(failures, 5), 5000));
      }
    }
  }

  // The committed offset of each lane that has none yet, else the reset's.
  async #position(generation: Generation): Promise<void> {
    const unknown = [...generation.lanes.values()].filter((lane) => lane.position === undefined);
    if (unknown.length === 0) return;
    const byTopic = new Map<string, number[]>();
    for (const lane of unknown) {
      byTopic.set(lane.topic, [...byTopic.get(lane.topic) ?? [], lane.partition]);
    }
    const committed = await this.#consumer.listCommittedOffsets({
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    });
    const missing = new Map<string, number[]>();
    for (const lane of unknown) {
      const offset = committed.get(lane.topic)?.[lane.partition];
      if (offset !== undefined && offset >= 0n) {
        lane.position = offset;
        lane.committed = offset;
      } else missing.set(lane.topic, [...missing.get(lane.topic) ?? [], lane.partition]);
    }
    if (missing.size === 0) return;
    const reset = this.#settings.autoOffsetReset;
    if (reset === "none") {
      throw new Error(
        `no committed offset for group "${this.#settings.groupId}" on ${
          [...missing].map(([t, ps]) => `${t} partitions ${ps.join(", ")}`).join("; ")
        }, and kafka.consumer.auto-offset-reset is none`,
      );
    }
    const offsets = await this.#consumer.listOffsets({
      topics: [...missing.keys()],
      partitions: Object.fromEntries(missing),
      timestamp: reset === "earliest" ? -2n : -1n,
    });
    for (const lane of unknown) {
      if (lane.position !== undefined) continue;
      const offset = offsets.get(lane.topic)?.[lane.partition];
      if (offset !== undefined) lane.position = offset;
    }
  }

  // One fetch of the lanes with room, from each partition's leader; the records to their lanes.
  async #fetch(generation: Generation, lanes: readonly PartitionLane[]): Promise<void> {
    const metadata = await this.#consumer.metadata({ topics: [...this.#settings.topics] });
    const byLeader = new Map<number, PartitionLane[]>();
    for (const lane of lanes) {
      const leader = metadata.topics.get(lane.topic)?.partitions[lane.partition]?.leader;
      if (leader === undefined || leader < 0) continue;
      byLeader.set(leader, [...byLeader.get(leader) ?? [], lane]);
    }
    await Promise.all([...byLeader].map(async ([node, leaderLanes]) => {
      const byId = new Map<string, string>();
      const topics = new Map<string, { partition: number; fetchOffset: bigint }[]>();
      for (const lane of leaderLanes) {
        const id = metadata.topics.get(lane.topic)!.id;
        byId.set(id, lane.topic);
        topics.set(id, [
          ...topics.get(id) ?? [],
          { partition: lane.partition, fetchOffset: lane.position! },
        ]);
      }
      let response;
      try {
        response = await this.#consumer.fetch({
          node,
          maxWaitTime: FETCH_WAIT_MS,
          connectionPool: this.#pool,
          topics: [...topics].map(([topicId, partitions]) => ({
            topicId,
            partitions: partitions.map(({ partition, fetchOffset }) => ({
              partition,
              fetchOffset,
              partitionMaxBytes: PARTITION_MAX_BYTES,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
            })),
          })),
        });
      } catch (error) {
        // An offset the log no longer has (retention passed it): reset as configured.
        const partial = (error as { response?: typeof response }).response;
        const reset = partial?.responses.flatMap((topic) =>
          topic.partitions.filter((p) =>
            p.errorCode === OFFSET_OUT_OF_RANGE
          ).map((p) => generation.lanes.get(`${byId.get(topic.topicId)}:${p.partitionIndex}`))
        ) ?? [];
        for (const lane of reset) {
          if (lane !== undefined) {
            lane.position = undefined;
          }
        }
        throw error;
      }
      // A response to a fetch of an ended generation is dropped: the next one fetches again
      // from what was committed.
      if (!generation.active) return;
      for (const topic of response.responses) {
        const name = byId.get(topic.topicId);
        for (const part of topic.partitions) {
          const lane = generation.lanes.get(`${name}:${part.partitionIndex}`);
          if (lane === undefined || lane.position === undefined || part.records === undefined) {
            continue;
          }
          const found: KafkaRecord[] = [];
          let next = lane.position;
          for (const batch of part.records) {
            const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
            if (last + 1n > next) next = last + 1n;
            if ((batch.attributes & IS_CONTROL) !== 0) continue;
            for (const record of batch.records) {
              const offset = batch.firstOffset + BigInt(record.offsetDelta);
              if (offset < lane.position) continue;
              // A topic of LogAppendTime gives the broker's time, the batch's, to every record.
              const appended = (batch.attributes & LOG_APPEND_TIME) !== 0;
              found.push(kafkaRecord(
                lane.topic,
                lane.partition,
                offset,
                Number(
                  appended ? batch.maxTimestamp : batch.firstTimestamp + record.timestampDelta,
                ),
                {
                  key: record.key ?? undefined,
                  value: record.value ?? undefined,
                  headers: record.headers.map(([name, value]) => [
                    name === null ? "" : name.toString("utf8"),
                    value ?? new Uint8Array(0),
                  ]),
                },
                appended ? "LogAppendTime" : "CreateTime",
              ));
            }
          }
          lane.position = next;
          if (found.length > 0) lane.push(found);
        }
      }
    }));
  }

  #requestCommit(generation: Generation): void {
    if (generation !== this.#generation) return;
    if (this.#committing !== undefined) {
      this.#commitAgain = true;
      return;
    }
    this.#committing = (async () => {
      try {
        do {
          this.#commitAgain = false;
          await this.#commit([...generation.lanes.values()], false);
        } while (this.#commitAgain && generation === this.#generation);
      } finally {
        this.#committing = undefined;
      }
    })();
  }

  // Commits, for each lane, the offset after what it finished, unless committed already. The
  // client refuses (group_guard.ts) a partition the member no longer holds.
  async #commit(lanes: readonly PartitionLane[], final: boolean): Promise<void> {
    const due = lanes.filter((lane) =>
      !lane.revoked && lane.done !== undefined &&
      (lane.committed === undefined || lane.done > lane.committed)
    );
    if (due.length === 0) return;
    const offsets = due.map((lane) => ({ lane, offset: lane.done! }));
    try {
      await this.#consumer.commit({
        offsets: offsets.map(({ lane, offset }) => ({
          topic: lane.topic,
          partition: lane.partition,
          offset,
          leaderEpoch: -1,
        })),
      });
      for (const { lane, offset } of offsets) {
        if (lane.committed === undefined || offset > lane.committed) lane.committed = offset;
      }
    } catch (error) {
      const { logger, where, groupId } = this.#settings;
      (final ? logger.error : (logger.warn ?? logger.error)).call(
        logger,
        `${where}: committing offsets for group "${groupId}" failed (${
          offsets.map(({ lane, offset }) =>
            `${lane.topic} partition ${lane.partition} at ${offset}`
          )
            .join(", ")
        })${final ? ": those records will be delivered again" : "; the next commit tries again"}`,
        loggable(error),
      );
    }
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
