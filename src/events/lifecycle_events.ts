// The application's own events, `ApplicationStarted` and `ApplicationClosing`, and the shutdown
// they frame, as a feature of the app: brought by `@EventListener`, so that an app without a
// listener neither loads nor carries it.
import { messageOf } from "../context/message_of.ts";
import type { FeatureFactory } from "../app_feature.ts";
import { ApplicationClosing, ApplicationStarted } from "./application_event.ts";
import { ListenerPublisher } from "./application_event_publisher.ts";
import { EventMulticaster, eventName, type Progress } from "./event_multicaster.ts";

/**
 * Publishes `ApplicationStarted` once the app is compiled (when a listener throws, refuses the
 * events from then on and rejects, naming it); at the close, publishes `ApplicationClosing`
 * (within `server.shutdown-timeout`) while everything still runs, and once the jobs have stopped
 * waits for the async listeners still running (within it too), then refuses the events
 * published from then on, before the beans stop. What async listeners throw goes to the logger.
 */
export const eventsFeature: FeatureFactory = ({ context, logger, shutdownTimeoutMs }) => {
  const timeoutMs = shutdownTimeoutMs;
  // The multicaster of the publisher Thaw made, if a bean asked for one: the async runs its
  // events started are the ones close() waits for, beside those of the app's own events.
  let multicaster: EventMulticaster | undefined;
  for (const { instance } of context.beans()) {
    multicaster ??= ListenerPublisher.multicasterOf(instance);
  }
  const events = multicaster ?? new EventMulticaster(() => context.beans(), logger);
  const limit = `server.shutdown-timeout (${timeoutMs / 1000} s)`;

  // Publishes `event`; resolves to its failure, naming the listener, if any. Bounded when a
  // `bound` is given: a listener still running then is left to itself.
  async function publish(event: object, bound?: number): Promise<Error | undefined> {
    const progress: Progress = {};
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      if (bound !== undefined) timer = setTimeout(() => resolve("late"), bound);
    });
    try {
      const outcome = await Promise.race([events.publish(event, progress), late]);
      return outcome === "late"
        ? new Error(
          `@EventListener ${progress.listener} still running on ${eventName(event)} after ` +
            `${limit}; the app closed all the same`,
        )
        : undefined;
    } catch (error) {
      return new Error(
        `@EventListener ${progress.listener} threw on ${eventName(event)}: ${messageOf(error)}`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  // The async listeners end (within the bound) before the beans they use stop. Until then, what
  // is published (by a listener of ApplicationClosing, a job or an async listener still running)
  // is delivered; from then on, it is refused.
  async function drain(): Promise<Error | undefined> {
    const running = await events.drain(timeoutMs);
    events.close();
    return running.length === 0 ? undefined : new Error(
      `Async @EventListener ${running.join(", ")} still running after ${limit}; the beans ` +
        `were stopped all the same`,
    );
  }

  return {
    started: async () => {
      const failure = await publish(new ApplicationStarted());
      if (failure === undefined) return;
      // An app that never starts must not keep what its beans opened: they stop next.
      await drain();
      throw failure;
    },
    close: {
      announce: () => publish(new ApplicationClosing(), timeoutMs),
      listeners: drain,
    },
  };
};
