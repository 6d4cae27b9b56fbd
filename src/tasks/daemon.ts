// `@Daemon`: a bean whose `run(signal)` runs as long as the app does, restarted when it fails or
// ends, stopped at close. The decorator brings the supervisor's feature: an app without a daemon
// carries none of it.
import { checkOptionsObject } from "../options_object.ts";
import { bringFeature, type FeatureFactory } from "../app_feature.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { classesOf, entryOf, ownEntry } from "../context/class_record.ts";
import { DefinitionError } from "../context/errors.ts";
import { onWorkerd } from "../runtime/on_workerd.ts";
import { type DaemonRun, DaemonSupervisor } from "./daemon_supervisor.ts";
import { TaskExecutors } from "./task_executors.ts";

/** What `@Daemon` takes. */
export interface DaemonOptions {
  /** The daemon's name in the log and health: the bean's class name by default. */
  readonly name?: string | undefined;
  /** Copies run at once: 1 by default. */
  readonly instances?: number | undefined;
}

/** What {@linkcode Daemon} returns: a decorator for a bean class with `run(signal)`. */
export type DaemonDecorator = <
  C extends abstract new (...args: never[]) => {
    run(signal: AbortSignal): Promise<unknown>;
  },
>(value: C, context: ClassDecoratorContext<C>) => void;

interface DaemonMark {
  readonly name: string;
  readonly instances: number;
}

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
 * @see https://github.com/thaw/thaw/blob/main/docs/tasks.md#daemon
 */
export function Daemon(options: DaemonOptions = {}): DaemonDecorator {
  checkOptionsObject(options as unknown, "@Daemon", ["name", "instances"]);
  const { name, instances = 1 } = options;
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    throw new TypeError("@Daemon({ name }): give a name, or leave it out for the class's");
  }
  if (!Number.isSafeInteger(instances) || instances < 1) {
    throw new TypeError(`@Daemon({ instances }): give a whole number, 1 or more, got ${instances}`);
  }
  return (value, context) => {
    checkDecoratorCall("@Daemon", value, context);
    const cls = String(context.name ?? "(anonymous)");
    if (typeof (value.prototype as { run?: unknown }).run !== "function") {
      throw new TypeError(`@Daemon on class ${cls}: it runs run(signal), which ${cls} lacks`);
    }
    ownEntry(context.metadata, DAEMON, () => ({ name: name ?? cls, instances }));
    bringFeature(context.metadata, daemonFeature);
  };
}

/** The supervisor of the app's daemons, once `tasks()` is there; started by `app.start()`. */
const daemonFeature: FeatureFactory = (host) => {
  const runs: DaemonRun[] = [];
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
    const bean = instance as { run(signal: AbortSignal): Promise<unknown> };
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
