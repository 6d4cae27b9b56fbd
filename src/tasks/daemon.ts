// `@Daemon`: a bean whose `run(signal)` runs as long as the app does, restarted when it fails or
// ends, stopped at close. The decorator brings the supervisor's feature: an app without a daemon
// carries none of it.
import { checkOptionsObject } from "../options_object.ts";
import { shownValue } from "../shown_value.ts";
import { durationOption } from "../config/duration.ts";
import { bringFeature, type FeatureFactory, type FeatureHost } from "../app_feature.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { classesOf, entryOf, ownEntry } from "../context/class_record.ts";
import { DefinitionError } from "../context/errors.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";
import { type DaemonRun, DaemonSupervisor } from "./daemon_supervisor.ts";
import { LockManager } from "./lock_manager.ts";
import { type DaemonLease, SingletonDaemon } from "./singleton_daemon.ts";
import { TaskExecutors } from "./task_executors.ts";

/** What `@Daemon` takes. */
export interface DaemonOptions {
  /** The daemon's name in the log and health: the bean's class name by default. */
  readonly name?: string | undefined;
  /** Copies run at once: 1 by default. */
  readonly instances?: number | undefined;
  /**
   * Runs on one replica at a time: the one that holds the lock `daemon:<name>` of the app's
   * `LockManager` (or of the one `lockManager` names), renewing its lease. `run(signal, lease)`
   * is given a fencing token, and its signal aborts when the lease may be lost.
   */
  readonly singleton?: boolean | undefined;
  /**
   * A singleton's lease, in milliseconds or as a duration (`"15s"`, the default): renewed every
   * third of it; how long a replica killed while holding it keeps the others waiting.
   */
  readonly lease?: number | string | undefined;
  /** A singleton's lock manager: the name of a `LockManager` bean, when the app has several. */
  readonly lockManager?: string | undefined;
}

/** What {@linkcode Daemon} returns with `singleton: true`: for a class with `run(signal, lease)`. */
export type SingletonDaemonDecorator = <
  C extends abstract new (...args: never[]) => {
    run(signal: AbortSignal, lease: DaemonLease): Promise<unknown>;
  },
>(value: C, context: ClassDecoratorContext<C>) => void;

/** What {@linkcode Daemon} returns: a decorator for a bean class with `run(signal)`. */
export type DaemonDecorator = <
  C extends abstract new (...args: never[]) => {
    run(signal: AbortSignal): Promise<unknown>;
  },
>(value: C, context: ClassDecoratorContext<C>) => void;

interface DaemonMark {
  readonly name: string;
  readonly instances: number;
  /** For a singleton: its lease, and the lock manager's bean name when one was given. */
  readonly singleton?: { readonly leaseMs: number; readonly lockManager: string | undefined };
}

const DEFAULT_LEASE_MS = 15_000;
const OPTIONS = ["name", "instances", "singleton", "lease", "lockManager"];

const DAEMON: unique symbol = Symbol("thaw.daemon");

/**
 * Runs the bean's `run(signal)` while the app runs, from `app.start()` (which `listen` calls),
 * `instances` copies at once. A run that throws, or ends while the app runs, is started again
 * after a capped exponential backoff (1 s, doubling, at most 1 minute; 1 s again after a run
 * that lasted a minute), logged and counted.
 * `app.close()` aborts `signal` and waits for every run to settle, up to
 * `server.shutdown-timeout`, naming in the log those that did not. Needs
 * `bootstrap({ tasks: tasks() })`; the class must be a bean (`@Service()`). Refused on workerd,
 * where no process outlives a request: use `@Scheduled` there.
 *
 * With `singleton: true`, it runs on one replica at a time: the one holding the lock
 * `daemon:<name>` of the app's `LockManager` (every replica waits for it, and the holder renews
 * its lease every third of `lease`). `run(signal, lease)` gets `lease.token`, a fencing token
 * greater for each new holder; its signal aborts a third of the lease before the lease could be
 * lost, and a holder killed with `kill -9` leaves the lock to another within a second of its
 * lease's end. An app without a `LockManager` bean is refused at start.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#daemon
 */
export function Daemon(
  options: DaemonOptions & { readonly singleton: true },
): SingletonDaemonDecorator;
/**
 * Runs the bean's `run(signal)` while the app runs, on every replica: see the singleton form
 * above for one replica at a time.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#daemon
 */
export function Daemon(options?: DaemonOptions): DaemonDecorator;
export function Daemon(options: DaemonOptions = {}): DaemonDecorator {
  checkOptionsObject(options as unknown, "@Daemon", OPTIONS);
  const { name, instances = 1, singleton = false, lease, lockManager } = options;
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    throw new TypeError("@Daemon({ name }): give a name, or leave it out for the class's");
  }
  if (!Number.isSafeInteger(instances) || instances < 1) {
    throw new TypeError(`@Daemon({ instances }): give a whole number, 1 or more, got ${instances}`);
  }
  if (typeof singleton !== "boolean") {
    throw new TypeError(`@Daemon({ singleton }): true or false, got ${shownValue(singleton)}`);
  }
  if (!singleton && (lease !== undefined || lockManager !== undefined)) {
    throw new TypeError(
      "@Daemon({ lease, lockManager }): they are a singleton's: add singleton: true",
    );
  }
  if (singleton && instances !== 1) {
    throw new TypeError(
      `@Daemon({ singleton, instances }): a singleton runs once, on one replica; got instances ` +
        `${instances}`,
    );
  }
  if (lockManager !== undefined && (typeof lockManager !== "string" || lockManager === "")) {
    throw new TypeError("@Daemon({ lockManager }): the name of a LockManager bean");
  }
  // Checked where the decorator is written, not when it is applied.
  const held: DaemonMark["singleton"] = singleton
    ? {
      leaseMs: lease === undefined
        ? DEFAULT_LEASE_MS
        : durationOption(lease, "@Daemon({ lease })", { min: 1000 }),
      lockManager,
    }
    : undefined;
  return (value, context) => {
    checkDecoratorCall("@Daemon", value, context);
    const cls = String(context.name ?? "(anonymous)");
    if (typeof (value.prototype as { run?: unknown }).run !== "function") {
      throw new TypeError(`@Daemon on class ${cls}: it runs run(signal), which ${cls} lacks`);
    }
    ownEntry(context.metadata, DAEMON, (): DaemonMark => ({
      name: name ?? cls,
      instances,
      ...(held === undefined ? {} : { singleton: held }),
    }));
    bringFeature(context.metadata, daemonFeature);
  };
}

/** The supervisor of the app's daemons, once `tasks()` is there; started by `app.start()`. */
const daemonFeature: FeatureFactory = (host) => {
  const runs: DaemonRun[] = [];
  // A singleton's lock is its name's: two of one name would wait for each other for ever.
  const singletons = new Map<string, string>();
  let first: string | undefined;
  let executors: TaskExecutors | undefined;
  for (const { instance } of host.context.beans()) {
    if (instance instanceof TaskExecutors) executors = instance;
    const [cls] = classesOf(instance);
    const mark = cls === undefined ? undefined : entryOf<DaemonMark>(cls, DAEMON);
    if (mark === undefined) continue;
    const where = `${cls.name}.run()`;
    first ??= where;
    if (onWorkerd()) {
      throw new DefinitionError(
        `${where}: @Daemon runs as long as the process, and on workerd no process outlives a ` +
          "request: run the work on a schedule with @Scheduled (a cron trigger) instead",
      );
    }
    const bean = instance as { run(signal: AbortSignal, lease?: DaemonLease): Promise<unknown> };
    if (mark.singleton !== undefined) {
      const other = singletons.get(mark.name);
      if (other !== undefined) {
        throw new DefinitionError(
          `${where}: @Daemon({ singleton: true }) is named "${mark.name}", as ${other} is: the ` +
            "name is the lock's, give each its own",
        );
      }
      singletons.set(mark.name, where);
      const { leaseMs, lockManager } = mark.singleton;
      const singleton = new SingletonDaemon(
        managerOf(host, where, lockManager),
        {
          key: `daemon:${mark.name}`,
          leaseMs,
          managerName: lockManager === undefined
            ? "app's LockManager"
            : `LockManager "${lockManager}"`,
        },
        (signal, lease) => bean.run(signal, lease),
        host.logger,
      );
      runs.push({ name: mark.name, run: (signal) => singleton.run(signal) });
      continue;
    }
    for (let i = 1; i <= mark.instances; i++) {
      runs.push({
        name: mark.instances === 1 ? mark.name : `${mark.name}#${i}`,
        run: (signal) => bean.run(signal),
      });
    }
  }
  if (runs.length === 0) return undefined;
  if (executors === undefined) {
    throw new DefinitionError(
      `${first}: @Daemon ${TaskExecutors["thaw.missing"]}`,
    );
  }
  const supervisor = new DaemonSupervisor(runs, host.logger);
  executors.daemons = supervisor;
  const timeoutMs = host.shutdownTimeoutMs;
  return {
    start: () => supervisor.start(),
    close: { jobs: () => supervisor.stop(timeoutMs).then(() => undefined) },
  };
};

// The lock manager of a singleton: the bean `name` names, or the app's one. A singleton without
// one would run on every replica: refused, saying what to declare.
function managerOf(host: FeatureHost, where: string, name: string | undefined): LockManager {
  const found = name === undefined
    ? host.context.beans().filter(({ instance }) => instance instanceof LockManager)
    : host.context.beans().filter((bean) => bean.name === name);
  if (found.length !== 1 || !(found[0].instance instanceof LockManager)) {
    const why = name !== undefined
      ? found.length === 0
        ? `lockManager "${name}" names no bean`
        : `lockManager "${name}" names a bean that is no LockManager`
      : found.length === 0
      ? "the app has no LockManager bean: declare one (SqlLockManager over the app's " +
        "datasource, SqlLockProvider, RedisLockManager) that every replica shares"
      : `the app has ${found.length} LockManager beans (${
        found.map((bean) => bean.name).join(", ")
      }): name one with lockManager`;
    throw new DefinitionError(`${where}: @Daemon({ singleton: true }): ${why}`);
  }
  return found[0].instance;
}
