// `mappings`: every route the app serves, its handler and its middleware.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { jsonAnswer } from "../actuator_endpoint.ts";
import { endpointRoute } from "../endpoint_route.ts";
import { mappings } from "../mappings.ts";

/** The `mappings` endpoint: the routes as they are when asked (its own among them). */
export const mappingsEndpoint: ActuatorEndpoint<"mappings"> = {
  id: "mappings",
  routes: ({ base, routes, globalMiddleware }) => ({
    routes: [
      endpointRoute(
        "GET",
        `${base}/mappings`,
        () => jsonAnswer(JSON.stringify({ routes: mappings(routes(), globalMiddleware) })),
      ),
    ],
  }),
};
