// The check of the app's `@HealthIndicator` beans, and the record the decorator leaves on a class:
// brought by the decorator, so that `bootstrap` finds the check only in an app that has one.
import type { BeanEntry } from "../context/application_context.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import type { Class } from "../context/class.ts";
import { entryOf, ownEntry } from "../context/class_record.ts";
import { DefinitionError } from "../context/errors.ts";
import { HEALTH_INDICATORS, type HealthIndicators, type IndicatorBean } from "./health_hooks.ts";

/** What `@HealthIndicator` recorded on one class (not its superclasses). */
export interface HealthIndicatorRecord {
  readonly name: string;
}

// The actuator's own key in a class's decorator metadata; the container never reads it.
const HEALTH = Symbol("thaw.health");

/**
 * Records `name` as the indicator of the class whose decorators receive `metadata`, and leaves the
 * check of the app's indicators where `bootstrap` looks for it.
 */
export function recordHealthIndicator(metadata: DecoratorMetadataObject, name: string): void {
  ownEntry<HealthIndicatorRecord>(metadata, HEALTH, () => ({ name }));
  (metadata as Record<symbol, unknown>)[HEALTH_INDICATORS] =
    healthIndicators satisfies HealthIndicators;
}

/**
 * The indicator record of a class's own `@HealthIndicator`: a subclass is an indicator only when
 * decorated itself, as it is a bean only then.
 */
export function healthIndicatorOf(cls: Class): HealthIndicatorRecord | undefined {
  return entryOf<HealthIndicatorRecord>(cls, HEALTH);
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
