// What `bootstrap` knows of health indicators: where `@HealthIndicator` leaves the check of the
// app's indicator beans, and the one look that finds it among the beans. The check comes with the
// decorator, so that an app without an indicator neither loads nor carries it: this file is all
// such an app carries.
import type { BeanEntry } from "../context/application_context.ts";
import { constructionHook } from "../context/construction_hooks.ts";

/** A `@HealthIndicator` bean, ready to be asked. */
export interface IndicatorBean {
  /** Its component name in the health body. */
  readonly name: string;
  /** Its class's name, for messages. */
  readonly className: string;
  /** Calls its `check()` on the bean. */
  readonly check: () => unknown;
  /**
   * Set for a component Thaw checks itself (the disk's, Redis's): its check answers the
   * component's health, a DOWN with details included; `part`, when given, is the key of its
   * details in a component it shares with others of its name (`db`).
   */
  readonly builtIn?: { readonly part?: string };
}

/** The app's `@HealthIndicator` beans, checked (see `health_beans.ts`). */
export type HealthIndicators = (beans: readonly BeanEntry[]) => IndicatorBean[];

/** Where `@HealthIndicator` leaves the {@linkcode HealthIndicators} in a class's metadata. */
export const HEALTH_INDICATORS: unique symbol = Symbol("thaw.health-indicators");

/**
 * The `@HealthIndicator` beans of the app, checked whether or not it serves health: none when no
 * bean's class is one. Looked up on the beans' classes, not their instances: an override stands
 * in for an indicator's instance (`overrides: [[DbHealth, { check: () => false }]]`).
 */
export function indicatorBeans(beans: readonly BeanEntry[]): IndicatorBean[] {
  for (const { type } of beans) {
    if (type === undefined) continue;
    const check = constructionHook<HealthIndicators>(type, HEALTH_INDICATORS);
    if (check !== undefined) return check(beans);
  }
  return [];
}
