import type { Hono, MiddlewareHandler } from "hono";
import { METHODS } from "hono/router";
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
import type { Class } from "./context/class.ts";
import { DefinitionError } from "./context/errors.ts";
import { nodeServerRequest } from "./runtime/node_incoming.ts";
import { buildApp, type CompiledRoute, compileRoutes, type RouteGuard } from "./web/compile.ts";
import { exceptionResolver, exceptionScope } from "./web/exception_resolver.ts";
import { guardedChain, type MiddlewareItem, middlewareName } from "./web/middleware.ts";
import { webBeans } from "./web/web_beans.ts";
import type { OpenApiFeature } from "./openapi/openapi_feature.ts";
import { DefaultErrorController, type ErrorController } from "./web/error_controller.ts";
import {
  createErrorResponder,
  type ErrorResponder,
  lastResortResponse,
  type Logger,
} from "./web/error_responder.ts";
import { HttpStatus } from "./http/http_status.ts";
import type { MultipartLimits } from "./http/multipart.ts";
import type { ActuatorFeature } from "./actuator/actuator_feature.ts";
import type { DataFeature } from "./data/data_feature.ts";
import type { SearchFeature } from "./search/search_feature.ts";
import type { TasksFeature } from "./tasks/tasks_feature.ts";
import type { KafkaFeature } from "./kafka/kafka_feature.ts";
import type { JobsFeature } from "./jobs/jobs_feature.ts";
import type { StorageFeature } from "./storage/storage_feature.ts";
import type { SecurityFeature } from "./security/security_feature.ts";
import type { LoggingFeature } from "./logging/logging_feature.ts";
import {
  type ApplicationInternals,
  registerApplication,
  type RouteToDocument,
} from "./application_internals.ts";
import { observeFetch, RouteMarks } from "./observe/request_observer.ts";
import { safeLogger } from "./observe/loggable.ts";
import { checkCaches } from "./cache/cache_hooks.ts";
import { indicatorBeans } from "./actuator/health_hooks.ts";
import { broughtFeatures } from "./app_feature.ts";
import { type FeatureSet, type FeatureSetHost, foldFeatures } from "./feature_set.ts";
import type { EdgeHandlers } from "./edge_events.ts";
import { entryHint, optionFeatures } from "./option_features.ts";

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
  /**
   * Makes each `datasource:` entry a `SqlClient` bean named after it (the primary one also found
   * by class), and runs its migrations first when asked: `data()` of `@thaw/thaw/data`.
   */
  readonly data?: DataFeature | false | undefined;
  /**
   * Makes each `search:` entry a `SearchClient` bean (the official OpenSearch client) named after
   * it (the primary one also found by class), and runs its migrations first when asked:
   * `search()` of `@thaw/thaw/search`.
   */
  readonly search?: SearchFeature | false | undefined;
  /** What `@Async` and the other task decorators run on: `tasks()` of `@thaw/thaw/tasks`. */
  readonly tasks?: TasksFeature | false | undefined;
  /** `KafkaTemplate` and `@KafkaListener`, over `kafka.*`: `kafka()` of `@thaw/thaw/kafka`. */
  readonly kafka?: KafkaFeature | false | undefined;
  /** Durable jobs: the `JobQueue` bean, `@JobHandler` workers: `jobs()` of `@thaw/thaw/jobs`. */
  readonly jobs?: JobsFeature | false | undefined;
  /** Object stores: an `ObjectStorage` bean per `storage:` entry: `storage()` of `@thaw/thaw/storage`. */
  readonly storage?: StorageFeature | false | undefined;
  /**
   * The JWT resource server: every route needs a caller with a valid bearer token unless
   * `@PermitAll()` or `security.permit-all` says otherwise: `security()` of `@thaw/thaw/security`.
   */
  readonly security?: SecurityFeature | false | undefined;
  /**
   * Levels by logger name (`logging.level`), a logger per bean (`@Autowired(Log)`) and structured
   * lines (`logging.structured.format.console`), Thaw's own lines included: `logging()` of
   * `@thaw/thaw/logging`. `false` leaves the logger as it is, whatever the configuration says.
   */
  readonly logging?: LoggingFeature | false | undefined;
}

/** A wired, compiled application. */
export interface Application extends EdgeHandlers {
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
   * Starts `@Scheduled` jobs, `@Daemon` beans and `@JobHandler` workers, for an app served some
   * other way than `listen(app)`, which starts them itself. A second call does nothing, nor does
   * one after `close()`; `thaw.scheduling.enabled: false` keeps the schedule off. A plain function.
   */
  start(): void;
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
      `app.hono.${method}(): the app is compiled, and what is added now would run after the ` +
        "controllers' routes: give middleware to bootstrap({ middleware }) or @UseMiddleware, " +
        "errors to @ExceptionHandler or the errorController, routes to a controller",
    );
  };
  // Hono's own list of its method shortcuts, and the rest of what adds to an app.
  const methods = [...METHODS, "use", "on", "all", "route", "mount", "notFound", "onError"];
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
  "data",
  "search",
  "tasks",
  "kafka",
  "jobs",
  "storage",
  "security",
  "logging",
]);

// An option bootstrap does not know would be ignored without a word: `scan`, which moved to its
// own entry point, above all.
function checkOptions(options: BootstrapOptions): void {
  for (const key of Object.keys(options)) {
    if (OPTIONS.has(key)) continue;
    throw new TypeError(
      `bootstrap({ ${key} }): ` + (
        key === "scan"
          ? SCAN_HINT
          : key === "health"
          ? `health is the actuator's, ${entryHint("actuator")}`
          : `no such option; the options are ${[...OPTIONS].join(", ")}`
      ),
    );
  }
}

/**
 * Loads the configuration, registers and wires every bean, compiles the controllers into a Hono
 * app and returns the application. Everything that can be checked is checked here: a missing
 * bean, a dependency cycle, two beans of one name, a bad route or two handlers for one route
 * reject the promise before any request is served.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#bootstrap
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
    // A conditional spread, not definedFields: this module is in every app's bundle.
    ...(location === undefined ? {} : { location }),
  };
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
  const limits = serverLimits(options, settings);
  const classes: Class[] = [...(options.controllers ?? []), ...(options.components ?? [])];
  checkScan(settings, config, options.config, classes);
  const context = new ApplicationContext({
    config: config.values,
    locate: settings.where,
    shutdownTimeoutMs: limits.shutdownTimeoutMs,
    logger,
  });
  // Before the app's classes: a datasource's client is started before the beans that use it,
  // and closed after them.
  const fromOptions = await optionFeatures(options, settings, { config, context, logger });
  for (const cls of classes) context.register(cls);
  for (const [token, instance] of options.overrides ?? []) context.override(token, instance);
  await context.refresh();
  const closeBeans = () => context.close(limits.shutdownTimeoutMs);
  // The beans started must not keep what they opened, whatever stops the app from here on.
  const web = await orClose(closeBeans, () => {
    // A thaw.cache name no method uses: settings that would do nothing.
    checkCaches({ beans: context.beans(), config: config.values, locate: settings.where, logger });
    // Two health indicators of one name, refused whether health is served or not.
    indicatorBeans(context.beans());
    return compileWeb(context, options, settings, limits, logger);
  });
  // Turned off when a server's shutdown starts, so that readiness answers DOWN (and a load
  // balancer stops sending) while the requests in flight finish.
  let accepting = true;
  const host: FeatureSetHost = {
    context,
    settings,
    logger,
    shutdownTimeoutMs: limits.shutdownTimeoutMs,
    middleware: options.middleware ?? [],
    beanOf: web.beanOf,
    defaultErrorBody: web.defaultErrorBody,
    accepting: () => accepting,
    // The guard of a feature folded before the one that serves apart guards its routes too.
    serveApart: (routes) => buildApp(routes, web.errors, { ...limits, guard: host.guard }).fetch,
    routes: web.routes,
    documented: web.documented,
  };
  const features = await foldFeatures(
    [...broughtFeatures(context.beans()), ...fromOptions],
    host,
    closeBeans,
  );
  const { hono, fetch } = await compileApp(web, features, limits, logger, host.guard);
  const app: Application = {
    fetch,
    hono,
    config: config.values,
    getBean: <T>(token: Class<T> | string): T => context.getBean(token),
    start: () => features.start(),
    scheduled: (controller) => features.cron(controller.cron),
    close: () => features.close(),
  };
  // What the features add to the edge runtimes' handlers (the jobs' queue consumer).
  features.edge(app);
  registerApplication(app, {
    ...internals(settings, options, web, startedAt),
    ...features.internals,
    serve: serveOptions(settings, limits, logger, () => {
      accepting = false;
      features.stopAccepting();
    }, app.close),
  });
  return app;
}

// What `make` returns; when it throws, `close` runs (what it throws left unsaid) first.
async function orClose<T>(close: () => Promise<void>, make: () => T | Promise<T>): Promise<T> {
  try {
    return await make();
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** The bounds of a request and of shutdown, from the options and the `server.*` keys. */
interface ServerLimits {
  readonly maxBodySize: number;
  readonly allowEncodedSlash: boolean;
  /** `server.shutdown-timeout`: how long requests in flight, then each `@PreDestroy`, may take. */
  readonly shutdownTimeoutMs: number;
  /** `server.request-timeout`; 0: no bound. */
  readonly requestTimeoutMs: number;
}

function serverLimits(options: BootstrapOptions, settings: ThawSettings): ServerLimits {
  const maxBodySize = options.maxBodySize ?? settings.get("server.max-body-size");
  if (!Number.isSafeInteger(maxBodySize) || maxBodySize < 0) {
    throw new ConfigError(`maxBodySize must be a whole number of bytes, got ${maxBodySize}`);
  }
  return {
    maxBodySize,
    allowEncodedSlash: options.allowEncodedSlash ?? settings.get("server.allow-encoded-slash"),
    shutdownTimeoutMs: settings.get("server.shutdown-timeout") * 1000,
    requestTimeoutMs: settings.get("server.request-timeout"),
  };
}

const SCAN_HINT = "scanning needs a file system, so it lives in its own entry point: import " +
  '{ scanComponents } from "@thaw/thaw/scan" and pass components: await scanComponents(config)';

// Scanning needs a file system: `scanComponents(config)` of `@thaw/thaw/scan` reads the key, and
// what it found comes in `components`. Left unscanned, the key would be ignored without a word.
function checkScan(
  settings: ThawSettings,
  config: LoadedConfig,
  given: BootstrapOptions["config"],
  classes: readonly Class[],
): void {
  const scanDirectories = settings.get("app.component-scan");
  if (scanDirectories.length === 0) return;
  const where = settings.where("app.component-scan");
  const scan = scanRecord(config) ?? scanRecord(given);
  if (scan === undefined) {
    throw new ConfigError(`${where}: ${SCAN_HINT}`);
  }
  scan.check(where, scanDirectories, classes);
}

/** The controllers' routes, compiled, and what answers their errors. */
interface WebParts {
  readonly routes: CompiledRoute[];
  readonly documented: RouteToDocument[];
  readonly errors: ErrorResponder;
  readonly middleware: MiddlewareHandler[];
  readonly beanOf: (type: Class) => unknown;
  readonly defaultErrorBody: boolean;
  readonly controllers: number;
}

async function compileWeb(
  context: ApplicationContext,
  options: BootstrapOptions,
  settings: ThawSettings,
  { maxBodySize, allowEncodedSlash }: ServerLimits,
  logger: Logger,
): Promise<WebParts> {
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
  const adviceScope = exceptionScope(advice);
  // The path of errors that belong to no controller: a 404, global middleware.
  const errors = exceptionResolver(new Map(), adviceScope, fallback, maxBodySize);
  const beanOf = (type: Class): unknown => context.getBean(type);
  const given = options.middleware ?? [];
  // Node's parsed request where the app runs behind Hono's Node adapter; the web Request elsewhere.
  const routes = await compileRoutes(controllers, {
    errors: fallback,
    maxBodySize,
    server: { ...nodeServerRequest, multipart: multipartLimits(settings, maxBodySize) },
    beanOf,
    advice: adviceScope,
    answersChecked: given.length > 0,
    globalMiddleware: given.map(middlewareName),
    allowEncodedSlash,
  });
  const middleware = guardedChain(
    given,
    beanOf,
    errors,
    undefined,
    (i) => `bootstrap({ middleware }) item ${i + 1}`,
  );
  return {
    routes,
    // The controllers' routes; the features' are added to `routes` as they are folded.
    documented: [...routes],
    errors,
    middleware,
    beanOf,
    defaultErrorBody: custom === undefined,
    controllers: controllers.length,
  };
}

// The Hono app of every route, and its fetch: Hono's own, already bound, answering synchronously
// when the handler does, which spares the server a promise per request; observed (metrics, spans,
// the access log), a wrapper. A route that cannot be compiled closes the features and the beans.
async function compileApp(
  web: WebParts,
  features: FeatureSet,
  { allowEncodedSlash, maxBodySize, requestTimeoutMs }: ServerLimits,
  logger: Logger,
  guard: RouteGuard | undefined,
): Promise<{ hono: Hono; fetch: Application["fetch"] }> {
  const observers = features.observers;
  const marks = observers.length > 0 ? new RouteMarks() : undefined;
  const hono = await orClose(() => features.close(), async () => {
    const hono = buildApp(web.routes, web.errors, {
      allowEncodedSlash,
      middleware: web.middleware,
      maxBodySize,
      guard,
      ...(marks === undefined ? {} : { marks }),
      ...(requestTimeoutMs > 0 ? { requestTimeout: { ms: requestTimeoutMs, logger } } : {}),
    });
    refuseLateRegistration(hono);
    await features.started();
    return hono;
  });
  const fetch = hono.fetch as Application["fetch"];
  return { hono, fetch: marks === undefined ? fetch : observeFetch(fetch, observers, marks) };
}

// What `listen` and the other entry points read of the app, but the features' part.
function internals(
  settings: ThawSettings,
  options: BootstrapOptions,
  web: WebParts,
  startedAt: number,
): Omit<ApplicationInternals, "serve"> {
  const uploadFolder = settings.get("server.multipart.location");
  return {
    settings,
    documented: web.documented,
    defaultErrorBody: web.defaultErrorBody,
    middleware: options.middleware ?? [],
    beanOf: web.beanOf,
    ...(uploadFolder === undefined
      ? {}
      : { uploads: { folder: uploadFolder, where: settings.where("server.multipart.location") } }),
    defaultPort: settings.get("server.port"),
    defaultHostname: settings.get("server.hostname"),
    started: {
      at: startedAt,
      controllers: web.controllers,
      routes: web.routes.length,
      profiles: settings.profiles,
    },
  };
}

// What `listen` passes to the server: the bounds, and the steps of shutdown.
function serveOptions(
  settings: ThawSettings,
  limits: ServerLimits,
  logger: Logger,
  shutdownStarting: () => void,
  closed: () => Promise<void>,
): ApplicationInternals["serve"] {
  return {
    maxBodySize: limits.maxBodySize,
    largestBody: Math.max(limits.maxBodySize, settings.get("server.multipart.max-request-size")),
    requestTimeout: limits.requestTimeoutMs > 0,
    headerTimeoutMs: settings.get("server.header-timeout"),
    refuse: (status) => lastResortResponse(HttpStatus.valueOf(status)),
    shutdownTimeoutMs: limits.shutdownTimeoutMs,
    shutdownDelayMs: settings.get("server.shutdown-delay") * 1000,
    logger,
    shutdownStarting,
    closed,
  };
}
