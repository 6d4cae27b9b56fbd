// What an interceptor works out for a method once, at its first call, and keeps for the calls
// after: by the bean's class, so that the options read from the class's decorators are read
// once per method, not per call, and go with the class when it is collected.

/** Each method's plan, by the class of the bean it is called on. */
export class MethodPlans<P> {
  readonly #plans = new WeakMap<object, Map<string, P>>();

  /** The plan of `method` on `target`'s class, made by `make` at its first call. */
  of(target: object, method: string, make: (type: object) => P): P {
    const type = (target as { constructor: object }).constructor;
    let plans = this.#plans.get(type);
    if (plans === undefined) this.#plans.set(type, plans = new Map());
    let plan = plans.get(method);
    if (plan === undefined) plans.set(method, plan = make(type));
    return plan;
  }
}
