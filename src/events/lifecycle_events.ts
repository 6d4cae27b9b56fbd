// The application's own events, `ApplicationStarted` and `ApplicationClosing`, and the shutdown
// they frame. Loaded with `@EventListener`, which leaves `lifecycleEventsOf` in the metadata of the
// classes it marks for `bootstrap` to find.
import { messageOf } from "../context/application_context.ts";
import { ApplicationClosing, ApplicationStarted } from "./application_event.ts";
import { ListenerPublisher } from "./application_event_publisher.ts";
import type { LifecycleEventsFactory } from "./event_hooks.ts";
import { EventMulticaster, eventName, type Progress } from "./event_multicaster.ts";

/** The lifecycle events of an app whose beans have listeners. */
export const lifecycleEventsOf: LifecycleEventsFactory = async (
  context,
  logger,
  timeoutMs,
  scheduler,
) => {
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
  async function closeBeans(failures: Error[]): Promise<void> {
    const running = await events.drain(timeoutMs);
    if (running.length > 0) {
      failures.push(
        new Error(
          `Async @EventListener ${running.join(", ")} still running after ${limit}; the beans ` +
            `were stopped all the same`,
        ),
      );
    }
    events.close();
    await context.close(timeoutMs);
  }

  const failure = await publish(new ApplicationStarted());
  if (failure !== undefined) {
    // An app that never starts must not keep what its beans opened.
    await closeBeans([]).catch(() => {});
    throw failure;
  }

  return async () => {
    const failures: Error[] = [];
    const closing = await publish(new ApplicationClosing(), timeoutMs);
    if (closing !== undefined) failures.push(closing);
    // The schedules stop first, and a run in progress ends, before the beans it uses stop.
    const stopBeans = () => closeBeans(failures);
    const stopped = await (scheduler?.close(stopBeans, timeoutMs) ?? stopBeans()).then(
      () => undefined,
      (error: Error) => error,
    );
    // Without an event's failure, the close fails as it would without events.
    if (failures.length === 0) {
      if (stopped !== undefined) throw stopped;
      return;
    }
    if (stopped !== undefined) failures.push(stopped);
    throw new AggregateError(
      failures,
      `Closing the application: ${failures.map((f) => f.message).join("; ")}`,
    );
  };
};
