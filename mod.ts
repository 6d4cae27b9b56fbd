/**
 * Thaw: Spring-style REST controllers for the fetch API, wired by a small IoC container and
 * compiled into a Hono app. Runs unchanged on Deno, Bun, Node and edge runtimes.
 *
 * An app declares its classes with decorators (`@RestController`, `@GetMapping`, `@Service`,
 * `@Autowired`, ...) and hands them to {@linkcode bootstrap}, which wires them and gives back a
 * `fetch` handler. Beside this entry point: `@thaw/thaw/config`, `/scan`, `/openapi`, `/actuator`,
 * `/server`, `/cli`, `/migrate`, `/cache-redis`, `/lock-sql` and `/types` (the types behind the
 * decorators' signatures). The guides, in the repository's `docs/`:
 *
 * - https://github.com/thaw/thaw/blob/main/docs/controllers.md
 * - https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md
 * - https://github.com/thaw/thaw/blob/main/docs/caching-interceptors-events.md
 * - https://github.com/thaw/thaw/blob/main/docs/scheduling.md
 * - https://github.com/thaw/thaw/blob/main/docs/errors.md
 * - https://github.com/thaw/thaw/blob/main/docs/openapi.md
 *
 * @example An app of one controller and one service (examples/greeting/), answering a request
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { GreetingController } from "./examples/greeting/greeting_controller.ts";
 * import { Greeter } from "./examples/greeting/greeter.ts";
 *
 * const app = await bootstrap({ controllers: [GreetingController], components: [Greeter] });
 * const response = await app.fetch(new Request("http://localhost/hello/Ada"));
 * assert.deepEqual(await response.json(), { message: "Hello, Ada!" });
 * export default app; // or, on Deno, Bun or Node: await listen(app, { port: 8080 }) of "@thaw/thaw/server"
 * ```
 *
 * @module
 */
import "./src/context/symbol_metadata.ts";

// Start: wire the decorated classes into an app, from its configuration.
export { bootstrap } from "./src/application.ts";
export type { Application, BootstrapOptions } from "./src/application.ts";
export type { EdgeHandlers, ExecutionContext, ScheduledController } from "./src/edge_events.ts";
export type { LoadedConfig } from "./src/config/application_config.ts";
export type { ConfigValues } from "./src/config/config_values.ts";
export { ConfigError } from "./src/config/config_error.ts";
export type { Logger } from "./src/web/error_responder.ts";

// Beans: the classes the container builds, what they are given, and when they start and stop.
export { Bean, Component, Configuration, Service } from "./src/context/stereotypes.ts";
export { Autowired } from "./src/context/autowired.ts";
export { Value } from "./src/context/value.ts";
export type { ConfigValueOptions } from "./src/context/value.ts";
export { ConfigurationProperties } from "./src/context/configuration_properties.ts";
export { PostConstruct, PreDestroy } from "./src/context/lifecycle.ts";
export type { Class } from "./src/context/class.ts";
export {
  CircularDependencyError,
  DefinitionError,
  DuplicateBeanError,
  NoSuchBeanError,
} from "./src/context/errors.ts";

// Around a bean's methods: interceptors, caching, events.
export { UseInterceptors } from "./src/context/interceptors.ts";
export type { MethodInterceptor, MethodInvocation } from "./src/context/interceptors.ts";
export { Cacheable, CacheEvict, CachePut } from "./src/cache/cacheable.ts";
export type { CacheableOptions, CacheEvictOptions } from "./src/cache/cacheable.ts";
export { CacheManager } from "./src/cache/cache_manager.ts";
export type { Cache } from "./src/cache/cache_manager.ts";
export {
  ApplicationClosing,
  ApplicationEvent,
  ApplicationStarted,
} from "./src/events/application_event.ts";
export { ApplicationEventPublisher } from "./src/events/application_event_publisher.ts";
export { EventListener } from "./src/events/event_listener.ts";
export type { EventListenerOptions } from "./src/events/event_listener.ts";

// Scheduled jobs, and their locks across replicas (through a `LockManager` of `@thaw/thaw/tasks`,
// `@thaw/thaw/lock-sql` or `@thaw/thaw/cache-redis`).
export { Scheduled } from "./src/scheduling/scheduled.ts";
export type { Duration, ScheduledOptions } from "./src/scheduling/scheduled_options.ts";
export { SchedulerLock } from "./src/scheduling/scheduler_lock.ts";
export type { SchedulerLockOptions } from "./src/scheduling/scheduler_lock_options.ts";

// Controllers: routes, what a handler's parameters are bound to, and the middleware around them.
export { RequestMapping, RestController } from "./src/web/controller.ts";
export type { RestControllerOptions } from "./src/web/controller.ts";
export {
  DeleteMapping,
  GetMapping,
  PatchMapping,
  PostMapping,
  PutMapping,
} from "./src/web/mapping.ts";
export { SseMapping } from "./src/web/sse_mapping.ts";
export type { SseEvent } from "./src/web/sse_frame.ts";
export { WebSocketMapping } from "./src/web/websocket_mapping.ts";
export type { WebSocketHandlers } from "./src/web/websocket_mapping.ts";
export {
  PathVariable,
  RequestBody,
  RequestHeader,
  RequestParam,
  RequestPart,
} from "./src/web/binder.ts";
export type { Binder, PartOptions, ValueOptions } from "./src/web/binder.ts";
export type { StandardSchemaV1 } from "./src/config/standard_schema.ts";
export { safeFilename } from "./src/http/multipart_filename.ts";
export { UseMiddleware } from "./src/web/middleware.ts";
export type { Middleware, MiddlewareItem } from "./src/web/middleware.ts";
export { ResponseStatus } from "./src/web/response_status.ts";

// Requests and answers.
export { HttpStatus } from "./src/http/http_status.ts";
export type { HttpStatusSeries } from "./src/http/http_status.ts";
export { HttpRequest } from "./src/http/http_request.ts";
export type { HttpRequestOptions } from "./src/http/http_request.ts";
export { ResponseEntity } from "./src/http/response_entity.ts";
export type { CookieOptions } from "./src/http/response_entity.ts";

// Errors: the exceptions a handler throws, and the handlers that answer them.
export { HttpException, ValidationException } from "./src/http/http_exception.ts";
export type { ValidationIssue } from "./src/http/http_exception.ts";
export { ControllerAdvice, ExceptionHandler } from "./src/web/exception_handler.ts";
export type { ErrorController } from "./src/web/error_controller.ts";

// The OpenAPI document's annotations (the document itself: `@thaw/thaw/openapi`).
export { ApiOperation, ApiResponse, ApiTags } from "./src/openapi/api_docs.ts";
export type {
  ApiOperationOptions,
  ApiResponseOptions,
  DescribedRoute,
  MiddlewareDocs,
  SecurityRequirement,
  SecurityScheme,
} from "./src/openapi/api_docs.ts";
export type { OpenApiFeature } from "./src/openapi/openapi_feature.ts";
export type { JsonSchema } from "./src/openapi/json_schema.ts";

// Health: an app's own indicators (the endpoint: `@thaw/thaw/actuator`).
export { HealthIndicator } from "./src/actuator/health_indicator.ts";
export type { HealthCheck, HealthCheckAnswer } from "./src/actuator/health_indicator.ts";
