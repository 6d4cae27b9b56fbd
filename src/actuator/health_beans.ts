import type { BeanEntry } from "../context/application_context.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import { DefinitionError } from "../context/errors.ts";
import { healthIndicatorOf } from "./health_indicator.ts";

/** A `@HealthIndicator` bean, ready to be asked. */
export interface IndicatorBean {
  /** Its component name in the health body. */
  readonly name: string;
  /** Its class's name, for messages. */
  readonly className: string;
  /** Calls its `check()` on the bean. */
  readonly check: () => unknown;
}

/**
 * The `@HealthIndicator` beans, checked whether or not the app serves health, so that an app that
 * turns health on in one environment only does not find its mistakes there first: two indicators
 * of one name, or one without a `check()` method, are a startup error naming the classes.
 */
export function healthIndicators(beans: readonly BeanEntry[]): IndicatorBean[] {
  const indicators: IndicatorBean[] = [];
  const byName = new Map<string, string>();
  for (const bean of beans) {
    if (bean.type === undefined) continue;
    const record = healthIndicatorOf(bean.type);
    if (record === undefined) continue;
    const className = bean.type.name;
    const other = byName.get(record.name);
    if (other !== undefined) {
      throw new DefinitionError(
        `Two health indicators are named "${record.name}": ${other} and ${className}; ` +
          "give each its own name",
      );
    }
    byName.set(record.name, className);
    const instance = bean.instance as { check?: unknown };
    // Awaited by the probe: the class's interceptors may answer its value with a promise.
    const check = awaitedForm(instance.check);
    if (typeof check !== "function") {
      throw new DefinitionError(
        `@HealthIndicator("${record.name}") on ${className}: the class has no check() method ` +
          "(implement HealthCheck)",
      );
    }
    indicators.push({ name: record.name, className, check: () => check.call(instance) });
  }
  return indicators;
}
