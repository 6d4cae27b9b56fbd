/**
 * The types behind the decorators' signatures: what `@GetMapping`, `@Autowired`,
 * `@ConfigurationProperties`, `@ExceptionHandler` and the others return, and the conditional types
 * with which they check, at compile time, a handler's parameters against its binders and path, a
 * field's type against its bean, and a properties class against its schema.
 *
 * An app does not write these: the decorators of `@thaw/thaw` infer them. They are here for a
 * library that wraps a decorator and must name what it returns.
 *
 * @example A decorator of one's own that maps a `GET` with a fixed path
 * ```ts
 * import assert from "node:assert/strict";
 * import { GetMapping } from "@thaw/thaw";
 * import type { MappingFor } from "@thaw/thaw/types";
 *
 * const Ping = (): MappingFor<"/ping", []> => GetMapping("/ping");
 * assert.equal(typeof Ping(), "function");
 * ```
 *
 * @module
 */

// What each decorator returns.
export type { ApiDocDecorator } from "./src/openapi/api_docs.ts";
export type { BeanOf, FieldCheck, InjectionDecorator } from "./src/context/autowired.ts";
export type { CacheDecorator, CacheKeyOption } from "./src/cache/cacheable.ts";
export type { EventListenerDecorator } from "./src/events/event_listener.ts";
export type { InterceptorsDecorator } from "./src/context/interceptors.ts";
export type { LifecycleDecorator } from "./src/context/lifecycle.ts";
export type { MappingDecorator, MappingFor } from "./src/web/mapping.ts";
export type { SseMappingFor } from "./src/web/sse_mapping.ts";
export type { WebSocketMappingFor } from "./src/web/websocket_mapping.ts";
export type { ResponseStatusDecorator } from "./src/web/response_status.ts";
export type { ScheduledDecorator } from "./src/scheduling/scheduled.ts";
export type { BeanClassDecorator, BeanMethodDecorator } from "./src/context/stereotypes.ts";
export type { UseMiddlewareDecorator } from "./src/web/middleware.ts";

// A handler's parameters against its binders and its path.
export type {
  BinderValue,
  BodyValue,
  OptionalValue,
  ParameterBinder,
  PartValue,
  PathBinder,
  ScalarValue,
  ValueOf,
} from "./src/web/binder.ts";
export type { BinderDescriptor, PartType } from "./src/web/binder_descriptor.ts";
export type { ScalarType } from "./src/web/scalar_type.ts";
export type {
  HandlerArguments,
  ParameterMismatch,
  ParametersRefusing,
  PathBinderNames,
  PathCheck,
  PathVariableName,
  PathVariableNames,
  SignatureCheck,
} from "./src/web/handler_signature.ts";
export type {
  ExceptionHandlerArguments,
  ExceptionHandlerCheck,
  ExceptionHandlerDecorator,
} from "./src/web/exception_handler.ts";

// A configuration field against its value, a properties class against its schema.
export type { ConfiguredValue } from "./src/context/value.ts";
export type {
  FieldsOf,
  PropertiesClass,
  PropertiesDecorator,
  Same,
  SchemaOutput,
  UndefinedWhereOptional,
} from "./src/context/configuration_properties.ts";

// The parts of Standard Schema's interface that `StandardSchemaV1` (of `@thaw/thaw`) is made of.
export type {
  StandardSchemaV1Issue,
  StandardSchemaV1Props,
  StandardSchemaV1Result,
} from "./src/config/standard_schema.ts";

// Where an OpenAPI annotation's schema may come from.
export type { SchemaSource } from "./src/openapi/json_schema.ts";
