// The features of one app, folded: what they serve and observe, and their steps of the app's
// life run in the declared places. A feature is "up" once made and, if it has a `started` step,
// once that step succeeded: a failing start or close reaches only the features that are up.
import type { AppFeature, ClosePhase, FeatureFactory, FeatureHost } from "./app_feature.ts";
import type { ApplicationInternals, RouteToDocument } from "./application_internals.ts";
import type { RequestObserver } from "./observe/request_observer.ts";
import type { CompiledRoute, RouteGuard } from "./web/compile.ts";
import type { DocumentedGuard } from "./openapi/documented_route.ts";
import type { EdgeHandlers } from "./edge_events.ts";

/** What a feature set is made from: the host, whose routes the fold adds to. */
export interface FeatureSetHost extends FeatureHost {
  readonly routes: CompiledRoute[];
  readonly documented: RouteToDocument[];
  /** The guard of every route, once a feature gave one. */
  guard?: RouteGuard | undefined;
  documentedGuard?: DocumentedGuard | undefined;
}

/** The features of one app, in the order they were folded, and their steps. */
export interface FeatureSet {
  /** What observes every request, outermost first. */
  readonly observers: readonly RequestObserver[];
  /** What the features give `listen` and the other entry points. */
  readonly internals: Partial<
    Pick<ApplicationInternals, "management" | "openapi" | "websocket" | "documentedGuard">
  >;
  /**
   * Runs each `started` step in turn, once the app is compiled. A step that fails undid its own
   * feature's part; its feature, and those after it, are not up: `close()` leaves them out.
   */
  started(): Promise<void>;
  /** `app.start()`. */
  start(): void;
  /** An edge runtime's cron trigger. */
  cron(expression: string): Promise<void>;
  /** Adds to `app`'s edge handlers what each feature adds, in the order they were folded. */
  edge(app: EdgeHandlers): void;
  /** The server stops taking requests. */
  stopAccepting(): void;
  /**
   * Runs the close steps of the features up, phase by phase, then stops the beans, whatever
   * failed; rejects at the end with an `AggregateError` naming each failure (the beans' own when
   * only they failed). A second call returns the same promise.
   */
  close(): Promise<void>;
}

/**
 * Makes each feature in turn, adding its routes to the host's before the next is made (OpenAPI
 * documents those before it). When one fails, closes those made that are up (those with a
 * `started` step are not yet), then the beans (`closeBeans`), and rethrows.
 */
export async function foldFeatures(
  factories: readonly FeatureFactory[],
  host: FeatureSetHost,
  closeBeans: () => Promise<void>,
): Promise<FeatureSet> {
  const made: AppFeature[] = [];
  try {
    for (const factory of factories) {
      const feature = await factory(host);
      if (feature === undefined) continue;
      made.push(feature);
      host.guard ??= feature.guard;
      host.documentedGuard ??= feature.documentedGuard;
      host.routes.push(...feature.routes ?? []);
      host.documented.push(...feature.documented ?? []);
    }
  } catch (error) {
    await featureSet(made, closeBeans).close().catch(() => {});
    throw error;
  }
  return featureSet(made, closeBeans);
}

function featureSet(all: readonly AppFeature[], closeBeans: () => Promise<void>): FeatureSet {
  const up = new Set(all.filter((feature) => feature.started === undefined));
  // In the order they were folded, whenever each came up.
  const each = (step: (feature: AppFeature) => unknown) =>
    all.forEach((feature) => up.has(feature) && step(feature));
  // What a feature threw as the server stopped taking requests: reported by the close, which
  // runs all the same.
  const failures: Error[] = [];
  let closing: Promise<void> | undefined;
  const set: FeatureSet = {
    observers: all.flatMap((feature) => feature.observers ?? []),
    internals: Object.assign({}, ...all.map((feature) => feature.internals)),
    async started() {
      for (const feature of all) {
        if (feature.started === undefined) continue;
        await feature.started();
        up.add(feature);
      }
    },
    start: () => each((feature) => feature.start?.()),
    cron: async (expression) => {
      await Promise.all(all.map((feature) => up.has(feature) && feature.cron?.(expression)));
    },
    // Each feature is given the handlers as those before it left them: a wrapper wraps a wrapper.
    edge: (app) => all.forEach((feature) => Object.assign(app, feature.handlers?.(app))),
    stopAccepting: () =>
      each((feature) => {
        try {
          feature.stopAccepting?.();
        } catch (error) {
          failures.push(error as Error);
        }
      }),
    close() {
      // A step may call close() before the first of them returns (a listener of
      // ApplicationClosing does): the promise is there first, so that such a call gets it.
      if (closing === undefined) {
        // Not a Deferred, which would weigh on the small worker that carries this module. Set by
        // the executor, which runs before the constructor returns.
        let settle: ((done: Promise<void>) => void) | undefined;
        closing = new Promise<void>((resolve) => settle = resolve);
        settle?.(closeInOrder(all.filter((feature) => up.has(feature)), closeBeans, failures));
      }
      return closing;
    },
  };
  return set;
}

async function closeInOrder(
  up: readonly AppFeature[],
  closeBeans: () => Promise<void>,
  failures: Error[],
): Promise<void> {
  // In the order ClosePhase gives them.
  for (const phase of ["announce", "jobs", "listeners"] satisfies ClosePhase[]) {
    for (const feature of up) {
      const step = feature.close?.[phase];
      // Started on a promise of its own: a step that throws before it returns one is a
      // failure like any other, and the steps after it run.
      const failure = step && await Promise.resolve().then(step).catch((error: Error) => error);
      if (failure) failures.push(failure);
    }
  }
  const beans = await closeBeans().then(() => undefined, (error: Error) => error);
  // The beans' own failure alone is already an AggregateError naming each hook.
  if (failures.length === 0) {
    if (beans !== undefined) throw beans;
    return;
  }
  if (beans !== undefined) failures.push(beans);
  throw new AggregateError(
    failures,
    `Closing the application: ${failures.map((failure) => failure.message).join("; ")}`,
  );
}
