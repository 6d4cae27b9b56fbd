// `loggers`: each logger's configured and effective level; `POST` sets or clears one, through the
// app's `LoggingSystem` bean.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { loggersRoutes, loggingSystemOf } from "../loggers_endpoint.ts";
import type { LoggingSystem } from "../../logging/logging_system.ts";

/** The `loggers` endpoint, where the app has a `LoggingSystem` bean. */
export const loggersEndpoint: ActuatorEndpoint<"loggers"> = {
  id: "loggers",
  unavailable: ({ beans }) =>
    loggingSystemOf(beans()) === undefined
      ? "loggers reads and sets the levels of a LoggingSystem bean, and the app has none: " +
        'pass bootstrap({ logging: logging() }), import { logging } from "@thaw/thaw/logging"'
      : undefined,
  routes: ({ base, beans }) => ({
    routes: loggersRoutes(base, loggingSystemOf(beans()) as LoggingSystem),
  }),
};
