/**
 * Thaw: Spring-style REST controllers for the fetch API, wired by a small IoC container and
 * compiled into a Hono app. Runs unchanged on Deno, Bun, Node and edge runtimes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Autowired, bootstrap, GetMapping, PathVariable, RestController, Service } from "@thaw/thaw";
 *
 * @Service()
 * class Greeter {
 *   greet(name: string): string {
 *     return `Hello, ${name}!`;
 *   }
 * }
 *
 * @RestController()
 * class GreetingController {
 *   @Autowired(Greeter)
 *   private greeter!: Greeter;
 *
 *   @GetMapping("/hello/{name}", PathVariable("name"))
 *   hello(name: string) {
 *     return { message: this.greeter.greet(name) };
 *   }
 * }
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

export {
  type Application,
  bootstrap,
  type BootstrapOptions,
  type ExecutionContext,
  type ScheduledController,
} from "./src/application.ts";

export type { LoadedConfig } from "./src/config/application_config.ts";
export type { ConfigValues } from "./src/config/config_values.ts";
export { ConfigError } from "./src/config/config_error.ts";

export {
  Autowired,
  type BeanOf,
  type FieldCheck,
  type InjectionDecorator,
} from "./src/context/autowired.ts";
export { type ConfiguredValue, type ConfigValueOptions, Value } from "./src/context/value.ts";
export {
  ConfigurationProperties,
  type FieldsOf,
  type PropertiesClass,
  type PropertiesDecorator,
  type Same,
  type SchemaOutput,
  type UndefinedWhereOptional,
} from "./src/context/configuration_properties.ts";
export { type LifecycleDecorator, PostConstruct, PreDestroy } from "./src/context/lifecycle.ts";
export {
  Bean,
  type BeanClassDecorator,
  type BeanMethodDecorator,
  Component,
  Configuration,
  Service,
} from "./src/context/stereotypes.ts";
export type { Class } from "./src/context/class_record.ts";
export {
  type InterceptorsDecorator,
  type MethodInterceptor,
  type MethodInvocation,
  UseInterceptors,
} from "./src/context/interceptors.ts";
export {
  ApplicationClosing,
  ApplicationEvent,
  ApplicationStarted,
} from "./src/events/application_event.ts";
export { ApplicationEventPublisher } from "./src/events/application_event_publisher.ts";
export {
  EventListener,
  type EventListenerDecorator,
  type EventListenerOptions,
} from "./src/events/event_listener.ts";
export {
  Cacheable,
  type CacheableOptions,
  type CacheDecorator,
  CacheEvict,
  type CacheEvictOptions,
  type CacheKeyOption,
  CachePut,
} from "./src/cache/cacheable.ts";
export { type Cache, CacheManager } from "./src/cache/cache_manager.ts";
export {
  CircularDependencyError,
  DefinitionError,
  DuplicateBeanError,
  NoSuchBeanError,
} from "./src/context/errors.ts";

export { Scheduled, type ScheduledDecorator } from "./src/scheduling/scheduled.ts";
export type { Duration, ScheduledOptions } from "./src/scheduling/scheduled_options.ts";
export { SchedulerLock } from "./src/scheduling/scheduler_lock.ts";
export type { SchedulerLockOptions } from "./src/scheduling/scheduler_lock_options.ts";
export {
  type LockConfiguration,
  LockProvider,
  type SimpleLock,
} from "./src/scheduling/lock_provider.ts";
export {
  type MysqlQueryable,
  type PostgresQueryable,
  type SqliteDatabaseLike,
  type SqlLockDialect,
  SqlLockProvider,
  type SqlLockProviderOptions,
  type SqlLockQuery,
} from "./src/scheduling/sql_lock_provider.ts";

export {
  RequestMapping,
  RestController,
  type RestControllerOptions,
} from "./src/web/controller.ts";
export {
  DeleteMapping,
  GetMapping,
  type MappingDecorator,
  type MappingFor,
  PatchMapping,
  PostMapping,
  PutMapping,
} from "./src/web/mapping.ts";
export {
  type Binder,
  type BinderValue,
  type BodyValue,
  type OptionalValue,
  type ParameterBinder,
  type PartOptions,
  type PartValue,
  type PathBinder,
  PathVariable,
  RequestBody,
  RequestHeader,
  RequestParam,
  RequestPart,
  type ScalarValue,
  type ValueOf,
  type ValueOptions,
} from "./src/web/binder.ts";
export type { BinderDescriptor, PartType } from "./src/web/binder_descriptor.ts";
export type { ScalarType } from "./src/web/scalar_type.ts";
export { safeFilename } from "./src/http/multipart_filename.ts";
export {
  type HandlerArguments,
  type ParameterMismatch,
  type ParametersRefusing,
  type PathBinderNames,
  type PathCheck,
  type PathVariableName,
  type PathVariableNames,
  type SignatureCheck,
} from "./src/web/handler_signature.ts";
export {
  type ApiDocDecorator,
  ApiOperation,
  type ApiOperationOptions,
  ApiResponse,
  type ApiResponseOptions,
  ApiTags,
  type DescribedRoute,
  type MiddlewareDocs,
  type SecurityRequirement,
  type SecurityScheme,
} from "./src/openapi/api_docs.ts";
export type { OpenApiFeature } from "./src/openapi/openapi_feature.ts";
export type { JsonSchema, SchemaSource } from "./src/openapi/json_schema.ts";
export {
  type Middleware,
  type MiddlewareItem,
  UseMiddleware,
  type UseMiddlewareDecorator,
} from "./src/web/middleware.ts";
export { ResponseStatus, type ResponseStatusDecorator } from "./src/web/response_status.ts";
export {
  ControllerAdvice,
  ExceptionHandler,
  type ExceptionHandlerArguments,
  type ExceptionHandlerCheck,
  type ExceptionHandlerDecorator,
} from "./src/web/exception_handler.ts";
export type { ErrorController } from "./src/web/error_controller.ts";
export {
  type HealthCheck,
  type HealthCheckAnswer,
  HealthIndicator,
} from "./src/actuator/health_indicator.ts";
export type { Logger } from "./src/web/error_responder.ts";
export type {
  StandardSchemaV1,
  StandardSchemaV1Issue,
  StandardSchemaV1Props,
  StandardSchemaV1Result,
} from "./src/config/standard_schema.ts";

export { HttpStatus, type HttpStatusSeries } from "./src/http/http_status.ts";
export { HttpRequest, type HttpRequestOptions } from "./src/http/http_request.ts";
export {
  HttpException,
  ValidationException,
  type ValidationIssue,
} from "./src/http/http_exception.ts";
export { type CookieOptions, ResponseEntity } from "./src/http/response_entity.ts";
