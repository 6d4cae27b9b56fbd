import type { Hono } from "hono";
import {
  configSecrets,
  isLoadedConfig,
  type LoadedConfig,
  resolveConfig,
  scanRecord,
} from "./config/application_config.ts";
import type { ConfigValues } from "./config/config_values.ts";
import { readSettings, type ThawSettings } from "./config/thaw_settings.ts";
import { maskError, noMask, secretsMask } from "./config/secrets_mask.ts";
import { ConfigError } from "./config/config_error.ts";
import type { EnvLookup } from "./config/env.ts";
import { runtimeEnv } from "./config/env.ts";
import { ApplicationContext } from "./context/application_context.ts";
import type { Class } from "./context/class_record.ts";
import { DefinitionError } from "./context/errors.ts";
import { nodeServerRequest } from "./runtime/node_incoming.ts";
import { buildApp, compileRoutes } from "./web/compile.ts";
import { exceptionResolver, exceptionScope } from "./web/exception_resolver.ts";
import {
  guardMiddleware,
  type MiddlewareItem,
  middlewareName,
  resolveMiddleware,
  sendableAnswer,
} from "./web/middleware.ts";
import { webBeans } from "./web/web_beans.ts";
import type { OpenApiDocument } from "./openapi/openapi_document.ts";
import { openApiConfigured, type OpenApiFeature, openApiSetup } from "./openapi/openapi_feature.ts";
import { DefaultErrorController, type ErrorController } from "./web/error_controller.ts";
import { createErrorResponder, lastResortResponse, type Logger } from "./web/error_responder.ts";
import { HttpStatus } from "./http/http_status.ts";
import type { MultipartLimits } from "./http/multipart.ts";
import { indicatorBeans } from "./actuator/health_hooks.ts";
import { type ActuatorFeature, actuatorSetup } from "./actuator/actuator_feature.ts";
import type { DocumentedRoute } from "./openapi/openapi_document.ts";
import { type ApplicationInternals, registerApplication } from "./application_internals.ts";
import { observeFetch, type RequestObserver, RouteMarks } from "./observe/request_observer.ts";
import { accessLogObserver } from "./observe/access_log.ts";
import { safeLogger } from "./observe/loggable.ts";
import { type Scheduler, schedulerFactory } from "./scheduling/scheduled_jobs.ts";
import { lifecycleEvents } from "./events/event_hooks.ts";
import { checkCaches } from "./cache/cache_hooks.ts";

/** Options of {@linkcode bootstrap}. */
export interface BootstrapOptions {
  /** Controller classes (`@RestController`). */
  readonly controllers?: readonly Class[] | undefined;
  /** Other bean classes (`@Component`, `@Service`, `@Configuration`). */
  readonly components?: readonly Class[] | undefined;
  /**
   * Beans to replace before wiring, as `[token, instance]` pairs (a test's fake repository): the
   * beans that use one get the instance. A class names the one bean `@Autowired(Class)` would
   * find (the class or a subclass), a string the bean of that name (a `@Bean` method's bean is
   * named so). The replaced class is not constructed, and the instance's own `@PostConstruct` and
   * `@PreDestroy` hooks do not run. A token that names no bean, or several, stops `bootstrap`.
   */
  readonly overrides?: readonly (readonly [Class | string, unknown])[] | undefined;
  /**
   * The configuration: `application.yml` as `loadConfig` of `@thaw/thaw/config` read it, or an
   * object of the same keys.
   */
  readonly config?: ConfigValues | LoadedConfig | undefined;
  /**
   * Where the `${VAR}` placeholders of a configuration object are read; the runtime's environment
   * by default. (`loadConfig` substitutes a file's when it reads it.)
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The largest request body in bytes; `server.max-body-size`, else 1 MiB. */
  readonly maxBodySize?: number | undefined;
  /**
   * Takes a `%2F` in a request path, so that a path variable can hold `/` (`/files/a%2Fb` binds
   * `a/b`); `server.allow-encoded-slash`, else `false`: such a path is a 400, as Spring's
   * firewall has it, since `..%2F` would reach a file path as `../`.
   */
  readonly allowEncodedSlash?: boolean | undefined;
  /**
   * Middleware run around every request, in this order: controller routes, the framework's own
   * answers (404, 405, `OPTIONS`, 413, 415), the OpenAPI and the health routes. Hono middleware
   * (`cors()`, `secureHeaders()`) or `Middleware` bean classes.
   */
  readonly middleware?: readonly MiddlewareItem[] | undefined;
  /**
   * Where unexpected errors are reported (`error`), and the start line of `listen(app)` (`info`,
   * when the logger has it); `console` by default.
   */
  readonly logger?: Logger | undefined;
  /**
   * Serves the OpenAPI document and its docs page: `openApi()` of `@thaw/thaw/openapi` (at
   * `/openapi.json` and `/docs` by default), over the `app.openapi` keys of the configuration;
   * `false` serves neither, whatever they say.
   */
  readonly openapi?: OpenApiFeature | false | undefined;
  /**
   * Serves the actuator's endpoints (`/actuator/health` and its probes, `info`, `mappings`), as
   * the `management.*` keys expose them: `actuator()` of `@thaw/thaw/actuator`. `false` serves
   * none, whatever the configuration says.
   */
  readonly actuator?: ActuatorFeature | false | undefined;
}

/** What edge runtimes (Cloudflare Workers, workerd) pass as a fetch handler's third argument. */
export interface ExecutionContext {
  /** Keeps the worker alive until the promise settles. */
  waitUntil(promise: Promise<unknown>): void;
  /** Lets the runtime forward the request to the origin if the handler throws. */
  passThroughOnException(): void;
  /** Values the worker's binding passes along (Wrangler 4). */
  props?: unknown;
}

/**
 * What an edge runtime passes to a cron trigger's handler (Cloudflare's `ScheduledController`):
 * the trigger's expression, and when it was due.
 */
export interface ScheduledController {
  /** The trigger's cron expression, as configured (`wrangler.toml`'s `[triggers] crons`). */
  readonly cron: string;
  /** When the trigger was due, in milliseconds since the epoch. */
  readonly scheduledTime?: number;
}

/** A wired, compiled application. */
export interface Application {
  /**
   * Answers a request, synchronously when the handler does (`await` it either way). Bound, so
   * `Deno.serve(app.fetch)` works, and shaped as the edge runtimes
   * expect, so `export default app` serves on Deno Deploy, Bun and Cloudflare Workers.
   */
  readonly fetch: (
    request: Request,
    env?: unknown,
    ctx?: ExecutionContext,
  ) => Response | Promise<Response>;
  /**
   * The compiled Hono app, to mount in another (`parent.route("/api", app.hono)`). Its `use`
   * throws: middleware added after `bootstrap` would not run ahead of the controllers' routes;
   * give it to `bootstrap({ middleware })` or `@UseMiddleware` instead.
   */
  readonly hono: Hono;
  /** The configuration, after `${VAR}` substitution. */
  readonly config: Readonly<ConfigValues>;
  /** The bean of a class (an instance of it) or of a name; throws `NoSuchBeanError`. */
  getBean<T>(token: Class<T> | string): T;
  /**
   * Starts the `@Scheduled` jobs, for an app served some other way than `listen(app)`, which
   * starts them itself. A second call does nothing, nor does a call after `close()`, nor one
   * with `thaw.scheduling.enabled: false`. A plain function.
   */
  start(): void;
  /**
   * Cloudflare Workers' handler of cron triggers (`export default app` passes it on, as does
   * `export default { fetch: app.fetch, scheduled: app.scheduled }`): runs, once each, the
   * `@Scheduled` cron jobs whose expression is the trigger's, and resolves when they end. A run
   * that throws is logged, then rejects the call with its error (an `AggregateError` when several
   * did), so that the runtime reports the run as failed. In an app with jobs, a trigger none of
   * them matches is logged.
   */
  readonly scheduled: (
    controller: ScheduledController,
    env?: unknown,
    ctx?: ExecutionContext,
  ) => Promise<void>;
  /**
   * Publishes `ApplicationClosing` first, while everything still runs, and waits for its
   * listeners (within `server.shutdown-timeout`). Then stops the scheduled jobs (a run in
   * progress is waited for, within `server.shutdown-timeout`; one still running then makes the
   * promise reject at the end, naming it), waits for the `{ async: true }` event listeners still
   * running (within it too), then stops the beans: runs every `@PreDestroy` hook once, the beans
   * in the reverse of the order they started, each bounded by `server.shutdown-timeout` seconds
   * (30 by default). A listener or hook that fails or runs over does not stop the rest; the
   * promise rejects at the end with an `AggregateError` naming each, and resolves when all
   * succeeded. A second call returns the same promise, one from a listener of
   * `ApplicationClosing` too, which calls it without awaiting it: the close waits for that
   * listener. Once the beans begin to stop, `publishEvent` rejects and reaches no listener. A
   * plain function: `const { close } = app` works.
   */
  close(): Promise<void>;
}

// What is added to the app after bootstrap runs after the controllers' routes have answered, or
// replaces Thaw's 404, 405 and error path: refused, each with where it goes instead.
function refuseLateRegistration(hono: Hono): void {
  const refuse = (method: string) => () => {
    throw new TypeError(
      `app.hono.${method}(): the app is compiled; middleware added after bootstrap would not run ` +
        "ahead of the controllers' routes, nor routes and handlers take their place: give " +
        "middleware to bootstrap({ middleware: [...] }) or to @UseMiddleware(...), errors to " +
        "@ExceptionHandler or the errorController, and routes to a controller",
    );
  };
  const methods = [
    "use",
    "on",
    "all",
    "get",
    "post",
    "put",
    "delete",
    "patch",
    "options",
    "route",
    "mount",
    "notFound",
    "onError",
  ] as const;
  for (const method of methods) {
    Object.defineProperty(hono, method, { value: refuse(method), configurable: true });
  }
}

const OPTIONS = new Set([
  "controllers",
  "components",
  "overrides",
  "config",
  "env",
  "maxBodySize",
  "allowEncodedSlash",
  "middleware",
  "logger",
  "openapi",
  "actuator",
]);

// An option bootstrap does not know would be ignored without a word: `scan`, which moved to its
// own entry point, above all.
function checkOptions(options: BootstrapOptions): void {
  for (const key of Object.keys(options)) {
    if (OPTIONS.has(key)) continue;
    throw new TypeError(
      key === "scan"
        ? `bootstrap({ scan }): component scanning lives in its own entry point: import ` +
          `{ scanComponents } from "@thaw/thaw/scan" and pass ` +
          `components: await scanComponents([...directories])`
        : key === "health"
        ? `bootstrap({ health }): the health endpoints are the actuator's, in its own entry ` +
          `point: import { actuator } from "@thaw/thaw/actuator" and pass ` +
          `bootstrap({ actuator: actuator() }), or actuator({ health: { ... } }) for its options`
        : `bootstrap({ ${key} }): no such option; the options are ${[...OPTIONS].join(", ")}`,
    );
  }
}

function checkMaxBodySize(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`maxBodySize must be a whole number of bytes, got ${value}`);
  }
  return value;
}

/**
 * Loads the configuration, registers and wires every bean, compiles the controllers into a Hono
 * app and returns the application. Everything that can be checked is checked here: a missing
 * bean, a dependency cycle, two beans of one name, a bad route or two handlers for one route
 * reject the promise before any request is served.
 *
 * @see docs/beans-and-configuration.md#bootstrap
 */
export async function bootstrap(options: BootstrapOptions = {}): Promise<Application> {
  const startedAt = performance.now();
  checkOptions(options);
  const envValues = options.env;
  const env: EnvLookup = envValues === undefined
    ? runtimeEnv()
    : (name) => Object.hasOwn(envValues, name) ? envValues[name] : undefined;
  if (envValues !== undefined && isLoadedConfig(options.config)) {
    // A file's placeholders were substituted when it was read: this env would change nothing.
    throw new ConfigError(
      `bootstrap({ env }) substitutes the placeholders of a configuration object; ` +
        `${options.config.source} was read by loadConfig, which takes them: ` +
        `loadConfig(path, { env })`,
    );
  }
  const config = resolveConfig(options.config, env);
  // No message of Thaw's shows a secret of the configuration, whichever check quotes a value.
  const mask = secretsMask(configSecrets(config), { json: true });
  try {
    return await wire(options, config, startedAt);
  } catch (error) {
    if ((error instanceof ConfigError || error instanceof DefinitionError) && mask !== noMask) {
      maskError(error, mask);
    }
    throw error;
  }
}

// How RequestPart reads a multipart body: the `server.multipart.*` keys, and the body limit up to
// which a body is read whole.
function multipartLimits(settings: ThawSettings, maxBodySize: number): MultipartLimits {
  const location = settings.get("server.multipart.location");
  return {
    maxFileSize: settings.get("server.multipart.max-file-size"),
    maxRequestSize: settings.get("server.multipart.max-request-size"),
    maxParts: settings.get("server.multipart.max-parts"),
    fileSizeThreshold: settings.get("server.multipart.file-size-threshold"),
    readWhole: maxBodySize,
    ...(location === undefined ? {} : { location }),
  };
}

// Whether a section holds a value that a file or the configuration object set: one the
// environment set alone (`MANAGEMENT_HEALTH_TIMEOUT`, shared with other services) is not the app
// asking for a feature.
function configuredInFile(config: LoadedConfig, section: string): boolean {
  const walk = (value: unknown, key: string): boolean => {
    if (config.origins?.get(key)?.startsWith("environment variable ")) return false;
    if (typeof value !== "object" || value === null) return value !== undefined && value !== null;
    return Object.entries(value).some(([k, v]) =>
      walk(v, Array.isArray(value) ? `${key}[${k}]` : `${key}.${k}`)
    );
  };
  return walk(config.values[section], section);
}

async function wire(
  options: BootstrapOptions,
  config: LoadedConfig,
  startedAt: number,
): Promise<Application> {
  // Every line Thaw logs may quote what a client sent (a path, a header value in a runtime's
  // error): escaped once here, for every part of the app that logs.
  const logger = safeLogger(options.logger ?? console);
  const settings = readSettings(
    config,
    (warning) => (logger.warn ?? logger.error).call(logger, warning),
  );
  const maxBodySize = checkMaxBodySize(
    options.maxBodySize ?? settings.get("server.max-body-size"),
  );
  const allowEncodedSlash = options.allowEncodedSlash ??
    settings.get("server.allow-encoded-slash");
  const defaultPort = settings.get("server.port");
  // Seconds: how long requests in flight, then each `@PreDestroy`, may take once shutdown starts.
  const shutdownTimeout = settings.get("server.shutdown-timeout");
  const defaultHostname = settings.get("server.hostname");

  const classes: Class[] = [...(options.controllers ?? []), ...(options.components ?? [])];
  // Scanning needs a file system: `scanComponents(config)` of `@thaw/thaw/scan` reads the key, and
  // what it found comes in `components`. Left unscanned, the key would be ignored without a word;
  // scanned with other directories than it holds now, or its classes left out, as good as.
  const scanDirectories = settings.get("app.component-scan");
  if (scanDirectories.length > 0) {
    const where = settings.where("app.component-scan");
    const scan = scanRecord(config) ?? scanRecord(options.config);
    if (scan === undefined) {
      throw new ConfigError(
        `${where}: scanning needs a file system, so it lives in its own entry point: ` +
          `import { scanComponents } from "@thaw/thaw/scan" and pass ` +
          `components: await scanComponents(config)`,
      );
    }
    if (scan.directories !== JSON.stringify(scanDirectories)) {
      throw new ConfigError(
        `${where}: the directories changed after scanComponents(config) scanned them ` +
          `(${scan.directories}, now ${JSON.stringify(scanDirectories)}): scan again`,
      );
    }
    const missing = scan.classes.filter((cls) => !classes.includes(cls as Class));
    if (missing.length > 0) {
      throw new ConfigError(
        `${where}: scanComponents(config) found ${
          missing.map((cls) => (cls as Class).name).join(", ")
        }, which bootstrap was not given: pass components: await scanComponents(config)`,
      );
    }
  }

  // The actuator's first step, before the beans are made: the meter provider they may ask for.
  const serveActuator = options.actuator !== undefined && options.actuator !== false
    ? await actuatorSetup(options.actuator)(settings)
    : undefined;
  const context = new ApplicationContext({
    config: config.values,
    locate: settings.where,
    shutdownTimeoutMs: shutdownTimeout * 1000,
    logger,
  });
  for (const cls of classes) context.register(cls);
  for (const [token, instance] of options.overrides ?? []) context.override(token, instance);
  await context.refresh();
  // `@Scheduled` methods bring the scheduler with them: an app without one loads none of it.
  let scheduler: Scheduler | undefined;
  try {
    // A thaw.cache name no method uses: settings that would do nothing.
    checkCaches({ beans: context.beans(), config: config.values, locate: settings.where, logger });
    scheduler = await schedulerFactory(context.beans())?.({
      context,
      config: config.values,
      enabled: settings.get("thaw.scheduling.enabled"),
      logger,
    });
  } catch (error) {
    // The beans started must not keep what they opened.
    await context.close().catch(() => {});
    throw error;
  }

  const custom = context.findBean("errorController");
  if (custom !== undefined && typeof (custom as ErrorController).handleError !== "function") {
    throw new DefinitionError(
      `The errorController bean (${context.sourceOf("errorController")}) has no ` +
        `handleError(request, response, status, error) method`,
    );
  }
  const errorController = (custom as ErrorController | undefined) ?? new DefaultErrorController();
  const fallback = createErrorResponder(errorController, logger, maxBodySize);
  const { controllers, advice } = webBeans(context);
  const indicators = indicatorBeans(context.beans());
  const adviceScope = exceptionScope(advice);
  // The path of errors that belong to no controller: a 404, global middleware.
  const errors = exceptionResolver(new Map(), adviceScope, fallback, maxBodySize);
  const beanOf = (type: Class): unknown => context.getBean(type);
  // Node's parsed request where the app runs behind Hono's Node adapter; the web Request elsewhere.
  const routes = compileRoutes(controllers, {
    errors: fallback,
    maxBodySize,
    server: { ...nodeServerRequest, multipart: multipartLimits(settings, maxBodySize) },
    beanOf,
    advice: adviceScope,
    answersChecked: (options.middleware?.length ?? 0) > 0,
    globalMiddleware: (options.middleware ?? []).map(middlewareName),
    allowEncodedSlash,
  });
  const middleware = (options.middleware ?? []).map((item, i) =>
    guardMiddleware(
      resolveMiddleware(item, beanOf, `bootstrap({ middleware }) item ${i + 1}`),
      errors,
      undefined,
      middlewareName(item),
    )
  );
  if (middleware.length > 0) middleware.unshift(sendableAnswer(errors, undefined));

  const documented: DocumentedRoute[] = routes.map((route) => ({
    httpMethod: route.httpMethod,
    path: route.pattern.source,
    variables: route.pattern.variables,
    ...(route.method === undefined ? {} : { method: route.method }),
  }));
  // Turned off when a server's shutdown starts, so that readiness answers DOWN (and a load
  // balancer stops sending) while the requests in flight finish.
  let accepting = true;
  // The actuator comes from its own entry point, as OpenAPI does: an app that serves none of its
  // endpoints neither evaluates nor carries them. Keys that configure it, left to nothing, would
  // be ignored without a word.
  const observers: RequestObserver[] = [];
  // `management.server.port`: the actuator's routes are served by an app of their own, on that
  // port, with none of the app's middleware (so that an auth guard leaves the probes open).
  const managementPort = settings.get("management.server.port");
  if (managementPort === undefined && settings.get("management.server.address") !== undefined) {
    // The actuator would stay on the app's port, open on its address: not what the key asks.
    throw new ConfigError(
      `${settings.where("management.server.address")}: an address for the management port, ` +
        "which management.server.port gives: set it, or leave the address out",
    );
  }
  let management: ApplicationInternals["management"];
  if (serveActuator !== undefined) {
    const served = serveActuator({
      indicators,
      accepting: () => accepting,
      routes,
      middleware: (options.middleware ?? []).map(middlewareName),
    });
    if (managementPort === undefined) {
      routes.push(...served.routes);
      documented.push(...served.documented);
    } else {
      const address = settings.get("management.server.address");
      management = {
        fetch: buildApp(served.routes, errors, { allowEncodedSlash, maxBodySize }).fetch,
        port: managementPort,
        ...(address === undefined ? {} : { hostname: address }),
        where: settings.where("management.server.port"),
      };
    }
    observers.push(...served.observers);
  } else if (options.actuator === undefined && configuredInFile(config, "management")) {
    throw new ConfigError(
      `${settings.where("management")}: these keys configure the actuator, which lives in its ` +
        `own entry point: import { actuator } from "@thaw/thaw/actuator" and pass ` +
        `bootstrap({ actuator: actuator() })`,
    );
  }
  // The generator comes from its own entry point, as the YAML reader and the server do: an app
  // that does not ask for OpenAPI neither evaluates nor carries it.
  let openapi: (() => Promise<OpenApiDocument>) | undefined;
  const openapiKeys = settings.get("app.openapi");
  if (options.openapi !== undefined && options.openapi !== false) {
    const served = await openApiSetup(options.openapi)({
      documented,
      settings,
      defaultErrorBody: custom === undefined,
      middleware: options.middleware ?? [],
      beanOf,
    });
    routes.push(...served.routes);
    openapi = served.document;
  } else if (options.openapi === undefined && openApiConfigured(openapiKeys)) {
    throw new ConfigError(
      `${settings.where("app.openapi")}: serving OpenAPI needs the generator, which ` +
        `lives in its own entry point: import { openApi } from "@thaw/thaw/openapi" and pass ` +
        `bootstrap({ openapi: openApi() })`,
    );
  }
  if (settings.get("logging.access.enabled")) observers.push(accessLogObserver(logger));
  const marks = observers.length > 0 ? new RouteMarks() : undefined;
  // Milliseconds; 0: no bound.
  const requestTimeoutMs = settings.get("server.request-timeout");
  const hono = buildApp(routes, errors, {
    allowEncodedSlash,
    middleware,
    maxBodySize,
    ...(marks === undefined ? {} : { marks }),
    ...(requestTimeoutMs > 0 ? { requestTimeout: { ms: requestTimeoutMs, logger } } : {}),
  });
  refuseLateRegistration(hono);

  // Hono's own: already bound, and answering synchronously when the handler does, which spares
  // the server a promise per request. Observed (metrics, spans, the access log), a wrapper.
  const fetch = marks === undefined
    ? hono.fetch as Application["fetch"]
    : observeFetch(hono.fetch as Application["fetch"], observers, marks);
  let closing: Promise<void> | undefined;
  const closeBeans = () => context.close(shutdownTimeout * 1000);
  // `@EventListener` methods bring the app's own events with them: ApplicationStarted, published
  // here (Spring Boot's: every bean started, the app compiled, nothing served yet), and the close
  // that publishes ApplicationClosing and waits for async listeners. An app without one carries
  // none of it.
  const closeEvents = await lifecycleEvents(context.beans())?.(
    context,
    logger,
    shutdownTimeout * 1000,
    scheduler,
  );
  // The schedules stop first, and a run in progress ends, before the beans it uses stop.
  const close = closeEvents === undefined
    ? () => closing ??= scheduler?.close(closeBeans, shutdownTimeout * 1000) ?? closeBeans()
    : () => {
      // A listener of ApplicationClosing runs within closeEvents(), before it returns: the
      // promise is there first, so that a close() the listener calls gets it.
      if (closing === undefined) {
        let settle!: (done: Promise<void>) => void;
        closing = new Promise<void>((resolve) => settle = resolve);
        settle(closeEvents());
      }
      return closing;
    };
  const uploadFolder = settings.get("server.multipart.location");
  const app: Application = {
    fetch,
    hono,
    config: config.values,
    getBean: <T>(token: Class<T> | string): T => context.getBean(token),
    start: () => scheduler?.start(),
    scheduled: async (controller) => await scheduler?.runCron(controller.cron),
    close,
  };
  registerApplication(app, {
    settings,
    ...(management === undefined ? {} : { management }),
    documented,
    defaultErrorBody: custom === undefined,
    middleware: options.middleware ?? [],
    beanOf,
    openapi,
    ...(uploadFolder === undefined
      ? {}
      : { uploads: { folder: uploadFolder, where: settings.where("server.multipart.location") } }),
    defaultPort,
    defaultHostname,
    started: {
      at: startedAt,
      controllers: controllers.length,
      routes: routes.length,
      profiles: settings.profiles,
    },
    serve: {
      maxBodySize,
      largestBody: Math.max(maxBodySize, settings.get("server.multipart.max-request-size")),
      requestTimeout: requestTimeoutMs > 0,
      headerTimeoutMs: settings.get("server.header-timeout"),
      refuse: (status) => lastResortResponse(HttpStatus.valueOf(status)),
      shutdownTimeoutMs: shutdownTimeout * 1000,
      shutdownDelayMs: settings.get("server.shutdown-delay") * 1000,
      logger,
      shutdownStarting: () => {
        accepting = false;
        // No job starts while the requests in flight finish; close() waits for those running.
        void scheduler?.stop(shutdownTimeout * 1000);
      },
      closed: close,
    },
  });
  return app;
}
