// `configprops`: Thaw's settings by section and the app's `@ConfigurationProperties` beans.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { configpropsRoutes } from "../configprops_endpoint.ts";
import { showValues } from "../show_values.ts";

/** The `configprops` endpoint. */
export const configpropsEndpoint: ActuatorEndpoint<"configprops"> = {
  id: "configprops",
  routes: ({ base, settings, beans }) => ({
    routes: configpropsRoutes(base, settings, beans, showValues(settings, "configprops")),
  }),
};
