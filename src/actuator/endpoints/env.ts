// `env`: the configuration's keys by the file or variable each value comes from.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { envRoutes } from "../env_endpoint.ts";
import { showValues } from "../show_values.ts";

/** The `env` endpoint. */
export const envEndpoint: ActuatorEndpoint<"env"> = {
  id: "env",
  routes: ({ base, config, settings }) => ({
    routes: envRoutes(base, config, showValues(settings, "env")),
  }),
};
