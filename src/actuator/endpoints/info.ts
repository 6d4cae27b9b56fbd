// `info`: the `info` section of the configuration, Thaw's version and the runtime.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { jsonAnswer } from "../actuator_endpoint.ts";
import { infoBody } from "../info_body.ts";
import { endpointRoute } from "../endpoint_route.ts";

/** The `info` endpoint: its answer is made once, as the configuration does not change. */
export const infoEndpoint: ActuatorEndpoint<"info"> = {
  id: "info",
  routes: ({ base, config }) => {
    const body = infoBody(config);
    return { routes: [endpointRoute("GET", `${base}/info`, () => jsonAnswer(body))] };
  },
};
