// What `kafka()` closes before the beans stop, in order: the listeners (their in-flight records
// finish, are committed, the members leave their groups), the consumer lag's reads, then the
// outboxes' relays (records a listener's transaction wrote go out first).
import type { ContextLogger } from "../context/class_record.ts";

/** The parts of `kafka()` its close stops; each left out when the app has none. */
export interface KafkaCloseParts {
  readonly listeners:
    | { close(timeoutMs: number): Promise<{ readonly abandoned: number }> }
    | undefined;
  readonly stopLag: (() => Promise<void> | void) | undefined;
  readonly outboxes: { close(timeoutMs: number): Promise<void> } | undefined;
  readonly logger: ContextLogger;
}

/**
 * Closes `parts` within `timeoutMs` (the app's `server.shutdown-timeout`), one deadline for all:
 * the relays get what the listeners left of it, not a timeout of their own. `now` is the clock.
 */
export async function closeKafkaParts(
  parts: KafkaCloseParts,
  timeoutMs: number,
  now: () => number = Date.now,
): Promise<void> {
  const { listeners, stopLag, outboxes, logger } = parts;
  const deadline = now() + timeoutMs;
  const left = await listeners?.close(timeoutMs);
  if (left !== undefined && left.abandoned > 0) {
    (logger.warn ?? logger.error).call(
      logger,
      `Kafka listeners: ${left.abandoned} record${
        left.abandoned === 1 ? "" : "s"
      } still running after ${timeoutMs} ms at close, not committed: they are delivered again`,
    );
  }
  await stopLag?.();
  await outboxes?.close(Math.max(0, deadline - now()));
}
