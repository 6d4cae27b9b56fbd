// What the actuator knows of the app's own endpoints: where `@Endpoint` leaves the code that
// makes them of the app's beans, and the one look that finds it. That code comes with the
// decorator, so that an app without an endpoint of its own neither loads nor carries it: this file
// is all such an app carries.
import type { BeanEntry } from "../context/application_context.ts";
import { constructionHook } from "../context/construction_hooks.ts";
import type { ActuatorEndpoint } from "./actuator_endpoint.ts";

/** The app's `@Endpoint` beans, as endpoints of the actuator's table, none of a `taken` id. */
export type OwnEndpoints = (
  beans: readonly BeanEntry[],
  taken: readonly string[],
) => ActuatorEndpoint[];

/** Where `@Endpoint` leaves the {@linkcode OwnEndpoints} in a class's metadata. */
export const OWN_ENDPOINTS: unique symbol = Symbol("thaw.own-endpoints");

/**
 * The app's own endpoints: none when no bean's class is an `@Endpoint`; one whose id is `taken`
 * (Thaw's own) stops `bootstrap`, naming the bean.
 */
export function ownEndpoints(
  beans: readonly BeanEntry[],
  taken: readonly string[],
): ActuatorEndpoint[] {
  for (const { type } of beans) {
    if (type === undefined) continue;
    const make = constructionHook<OwnEndpoints>(type, OWN_ENDPOINTS);
    if (make !== undefined) return make(beans, taken);
  }
  return [];
}
