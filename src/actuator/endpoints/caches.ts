// `caches`: the caches of the app's `CacheManager` beans; `DELETE` evicts one, or all.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { cachesRoutes } from "../caches_endpoint.ts";

/** The `caches` endpoint. */
export const cachesEndpoint: ActuatorEndpoint<"caches"> = {
  id: "caches",
  routes: ({ base, beans, mask }) => ({ routes: cachesRoutes(base, beans, mask) }),
};
