// The features of one app, folded: what they serve and observe, and their steps of the app's
// life run in the declared places. A feature is "up" once made and, if it has a `started` step,
// once that step succeeded: a failing start or close reaches only the features that are up.
import type { AppFeature, ClosePhase, FeatureFactory, FeatureHost } from "./app_feature.ts";
import type { ApplicationInternals, RouteToDocument } from "./application_internals.ts";
import type { RequestObserver } from "./observe/request_observer.ts";
import type { CompiledRoute } from "./web/compile.ts";

/** What a feature set is made from: the host, whose routes the fold adds to. */
export interface FeatureSetHost extends FeatureHost {
  readonly routes: CompiledRoute[];
  readonly documented: RouteToDocument[];
}

/** The features of one app, in the order they were folded, and their steps. */
export interface FeatureSet {
  /** What observes every request, outermost first. */
  readonly observers: readonly RequestObserver[];
  /** What the features give `listen` and the other entry points. */
  readonly internals: Partial<Pick<ApplicationInternals, "management" | "openapi">>;
  /**
   * Runs each `started` step in turn, once the app is compiled. A step that fails undid its own
   * feature's part; its feature, and those after it, are not up: `close()` leaves them out.
   */
  started(): Promise<void>;
  /** `app.start()`. */
  start(): void;
  /** An edge runtime's cron trigger. */
  cron(expression: string): Promise<void>;
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
 * documents those before it). When one fails, closes those made, then the beans (`closeBeans`),
 * and rethrows.
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
  const up = all.filter((feature) => feature.started === undefined);
  let closing: Promise<void> | undefined;
  const set: FeatureSet = {
    observers: all.flatMap((feature) => feature.observers ?? []),
    internals: Object.assign({}, ...all.map((feature) => feature.internals)),
    async started() {
      for (const feature of all) {
        if (feature.started === undefined) continue;
        await feature.started();
        up.push(feature);
      }
    },
    start: () => up.forEach((feature) => feature.start?.()),
    cron: async (expression) => {
      await Promise.all(up.map((feature) => feature.cron?.(expression)));
    },
    stopAccepting: () => up.forEach((feature) => feature.stopAccepting?.()),
    close() {
      // A step may call close() before the first of them returns (a listener of
      // ApplicationClosing does): the promise is there first, so that such a call gets it.
      if (closing === undefined) {
        let settle!: (done: Promise<void>) => void;
        closing = new Promise<void>((resolve) => settle = resolve);
        settle(closeInOrder(up, closeBeans));
      }
      return closing;
    },
  };
  return set;
}

// In the order they run (see ClosePhase).
const CLOSE_PHASES: readonly ClosePhase[] = ["announce", "jobs", "listeners"];

async function closeInOrder(
  up: readonly AppFeature[],
  closeBeans: () => Promise<void>,
): Promise<void> {
  const failures: Error[] = [];
  for (const phase of CLOSE_PHASES) {
    for (const feature of up) {
      const failure = await feature.close?.[phase]?.().catch((error: Error) => error);
      if (failure !== undefined) failures.push(failure);
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
