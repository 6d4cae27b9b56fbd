/**
 * What the events of an application may extend (Spring's `ApplicationEvent`): it stamps when the
 * event was made. Extending it is a choice, not a rule: any object can be published, and an
 * `@EventListener(ApplicationEvent)` receives the events of every subclass, the app's own and
 * Thaw's ({@linkcode ApplicationStarted}, {@linkcode ApplicationClosing}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApplicationEvent } from "@thaw/thaw";
 *
 * class OrderPlaced extends ApplicationEvent {
 *   constructor(readonly orderId: number) {
 *     super();
 *   }
 * }
 *
 * const before = Date.now();
 * const event = new OrderPlaced(7);
 * assert.equal(event.orderId, 7);
 * assert.ok(event.timestamp >= before && event.timestamp <= Date.now());
 * ```
 */
export abstract class ApplicationEvent {
  /** When the event was made, in milliseconds since the epoch. */
  readonly timestamp: number = Date.now();
}

/**
 * Published once at the end of `bootstrap()`, when every bean is started (its `@PostConstruct`
 * hooks have run) and the web app is compiled, before any request is served or scheduled job
 * runs (Spring Boot's `ApplicationStartedEvent`). A listener that throws makes `bootstrap` reject,
 * naming it, once the beans already started are stopped.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#applicationstarted
 */
export class ApplicationStarted extends ApplicationEvent {}

/**
 * Published first thing in `app.close()`, while every bean and scheduled job still runs (Spring's
 * `ContextClosedEvent`): its listeners are awaited, bounded by `server.shutdown-timeout`, before
 * the schedules stop and the `@PreDestroy` hooks run. A listener that throws does not stop the
 * close: `app.close()` rejects at the end, naming it with the other failures. The events its
 * listeners publish are delivered. A listener that shuts the app down calls `app.close()`, which
 * returns the close in progress, without awaiting it: the close waits for the listener, which
 * would wait for the close until `server.shutdown-timeout`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md#applicationclosing
 */
export class ApplicationClosing extends ApplicationEvent {}
