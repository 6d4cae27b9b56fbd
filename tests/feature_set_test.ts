// The fold of an app's features: what each adds, and its steps of the app's life in their
// declared places, whatever order the features come in, and what a failing step closes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AppFeature, ClosePhase, FeatureFactory } from "../src/app_feature.ts";
import { type FeatureSet, type FeatureSetHost, foldFeatures } from "../src/feature_set.ts";
import type { CompiledRoute } from "../src/web/compile.ts";
import type { DocumentedRoute } from "../src/openapi/documented_route.ts";

// What no test here reads but the routes: the fold passes it on as it is.
const host = (routes: CompiledRoute[] = [], documented: DocumentedRoute[] = []) =>
  ({ routes, documented }) as unknown as FeatureSetHost;

/** A feature that records each of its steps in `log` as `name:step`. */
function recorded(
  log: string[],
  name: string,
  phases: readonly ClosePhase[],
  more: Partial<AppFeature> = {},
): FeatureFactory {
  const close: { [P in ClosePhase]?: () => Promise<Error | undefined> } = {};
  for (const phase of phases) {
    close[phase] = () => {
      log.push(`${name}:${phase}`);
      return Promise.resolve(undefined);
    };
  }
  return () => ({
    start: () => log.push(`${name}:start`),
    stopAccepting: () => log.push(`${name}:stopAccepting`),
    cron: (expression) => {
      log.push(`${name}:cron ${expression}`);
      return Promise.resolve();
    },
    close,
    ...more,
  });
}

function fold(
  factories: readonly FeatureFactory[],
  log: string[],
  beans: () => Promise<void> = () => {
    log.push("beans");
    return Promise.resolve();
  },
): Promise<FeatureSet> {
  return foldFeatures(factories, host(), beans);
}

describe("foldFeatures", () => {
  it("closes phase by phase, whatever order the features come in, then the beans", async () => {
    for (const reversed of [false, true]) {
      const log: string[] = [];
      const factories = [
        recorded(log, "events", ["announce", "listeners"]),
        recorded(log, "scheduling", ["jobs"]),
        recorded(log, "other", ["listeners", "announce"]),
      ];
      const set = await fold(reversed ? factories.reverse() : factories, log);
      await set.close();
      const order = log.map((step) => step.split(":").at(-1));
      assert.deepEqual(order, ["announce", "announce", "jobs", "listeners", "listeners", "beans"]);
    }
  });

  it("runs every step when one fails, and rejects at the end naming each failure", async () => {
    const log: string[] = [];
    const failing: FeatureFactory = () => ({
      close: {
        announce: () => Promise.resolve(new Error("announce failed")),
        jobs: () => Promise.reject(new Error("jobs threw")),
      },
    });
    const set = await fold(
      [failing, recorded(log, "next", ["listeners"])],
      log,
      () => Promise.reject(new AggregateError([], "beans failed")),
    );
    const closing = set.close();
    assert.equal(set.close(), closing, "a second close() is the first");
    await assert.rejects(closing, (error: unknown) => {
      assert.ok(error instanceof AggregateError);
      assert.equal(
        error.message,
        "Closing the application: announce failed; jobs threw; beans failed",
      );
      assert.equal(error.errors.length, 3);
      return true;
    });
    assert.deepEqual(log, ["next:listeners"]);
  });

  it("takes a step that throws before it returns a promise as a failure, and runs the rest", async () => {
    const log: string[] = [];
    const thrown = new Error("thrown at once");
    const set = await fold([
      () => ({
        close: {
          announce: () => {
            throw thrown;
          },
        },
        stopAccepting: () => {
          throw new Error("stop threw");
        },
      }),
      recorded(log, "next", ["announce", "jobs"]),
    ], log);
    // The server's shutdown goes on: the failure is the close's to report.
    set.stopAccepting();
    await assert.rejects(set.close(), (error: unknown) => {
      assert.ok(error instanceof AggregateError);
      assert.equal(error.message, "Closing the application: stop threw; thrown at once");
      return true;
    });
    assert.deepEqual(log, ["next:stopAccepting", "next:announce", "next:jobs", "beans"]);
  });

  it("closes the features of a phase in the order they were folded, started or not", async () => {
    const log: string[] = [];
    const set = await fold([
      recorded(log, "first", ["jobs"], { started: () => Promise.resolve() }),
      recorded(log, "second", ["jobs"]),
    ], log);
    await set.started();
    await set.close();
    assert.deepEqual(log, ["first:jobs", "second:jobs", "beans"]);
  });

  it("rejects with the beans' own error when only they fail", async () => {
    const beans = new AggregateError([new Error("pool")], "Closing the application context");
    const set = await fold([recorded([], "quiet", ["jobs"])], [], () => Promise.reject(beans));
    await assert.rejects(set.close(), (error: unknown) => error === beans);
  });

  it("gives a close() called from a step the close in progress", async () => {
    const log: string[] = [];
    let inner: Promise<void> | undefined;
    // The set, once made: its step calls close() on it.
    const made: { set?: FeatureSet } = {};
    made.set = await fold([() => ({
      close: {
        announce: () => {
          inner = made.set?.close();
          return Promise.resolve(undefined);
        },
      },
    })], log);
    const outer = made.set.close();
    await outer;
    assert.equal(inner, outer);
    assert.deepEqual(log, ["beans"]);
  });

  it("folds routes in order: a feature sees the routes of those before it", async () => {
    const route = (path: string) => ({ path }) as unknown as CompiledRoute;
    const documented = (path: string) => ({ path }) as unknown as DocumentedRoute;
    const seen: string[][] = [];
    const adds = (path: string): FeatureFactory => ({ routes, documented: docs }) => {
      seen.push([...routes, ...docs].map((r) => (r as unknown as { path: string }).path));
      return { routes: [route(path)], documented: [documented(`doc ${path}`)] };
    };
    const routes = [route("/controller")];
    const docs: DocumentedRoute[] = [];
    await foldFeatures(
      [adds("/a"), () => undefined, adds("/b")],
      host(routes, docs),
      () => Promise.resolve(),
    );
    assert.deepEqual(seen, [["/controller"], ["/controller", "/a", "doc /a"]]);
    assert.deepEqual(routes.map((r) => (r as unknown as { path: string }).path), [
      "/controller",
      "/a",
      "/b",
    ]);
    assert.equal(docs.length, 2);
  });

  it("closes the features made and the beans when one cannot be made", async () => {
    const log: string[] = [];
    const broken = new Error("bad cron");
    await assert.rejects(
      fold([
        recorded(log, "made", ["jobs"]),
        // Made, but not started: nothing of it to close.
        recorded(log, "unstarted", ["announce"], { started: () => Promise.resolve() }),
        () => Promise.reject(broken),
        recorded(log, "never", ["jobs"]),
      ], log),
      (error: unknown) => error === broken,
    );
    assert.deepEqual(log, ["made:jobs", "beans"]);
  });

  it("closes only the features up after a start failed: not the failing one, nor those after it", async () => {
    const log: string[] = [];
    const broken = new Error("listener threw");
    const set = await fold([
      recorded(log, "before", ["announce"], {
        started: () => {
          log.push("before:started");
          return Promise.resolve();
        },
      }),
      recorded(log, "plain", ["jobs"]),
      recorded(log, "failing", ["announce"], { started: () => Promise.reject(broken) }),
      recorded(log, "after", ["announce"], {
        started: () => {
          log.push("after:started");
          return Promise.resolve();
        },
      }),
    ], log);
    await assert.rejects(set.started(), (error: unknown) => error === broken);
    await set.close();
    assert.deepEqual(log, ["before:started", "before:announce", "plain:jobs", "beans"]);
  });

  it("starts, triggers and stops accepting only the features up", async () => {
    const log: string[] = [];
    const set = await fold([
      recorded(log, "plain", []),
      recorded(log, "late", [], { started: () => Promise.resolve() }),
    ], log);
    set.start();
    set.stopAccepting();
    await set.cron("0 * * * *");
    assert.deepEqual(log, ["plain:start", "plain:stopAccepting", "plain:cron 0 * * * *"]);
    await set.started();
    log.length = 0;
    set.start();
    assert.deepEqual(log, ["plain:start", "late:start"]);
  });

  it("adds to the app's edge handlers what each feature adds, a wrapper wrapping the one before", async () => {
    const app = {
      fetch: (_request: Request, env?: unknown) => new Response(`app ${JSON.stringify(env)}`),
      scheduled: () => Promise.resolve(),
    };
    const queue = () => Promise.resolve();
    const wrapping = (name: string): Partial<AppFeature> => ({
      handlers: ({ fetch }) => ({
        fetch: (request, env, ctx) => fetch(request, [name, env], ctx),
      }),
    });
    const set = await fold([
      recorded([], "plain", []),
      recorded([], "first", [], wrapping("first")),
      recorded([], "consumer", [], { handlers: () => ({ queue }) }),
      recorded([], "second", [], wrapping("second")),
    ], []);
    const scheduled = app.scheduled;
    set.edge(app);
    assert.equal(
      await (await app.fetch(new Request("http://localhost/"), 1)).text(),
      'app ["first",["second",1]]',
    );
    assert.equal((app as { queue?: unknown }).queue, queue);
    assert.equal(app.scheduled, scheduled);
  });
});
