// The second form of an intercepted method, for the callers of Thaw's own that await whatever a
// method answers. Apart from the interceptors, so that what calls beans' methods finds it in an
// app that intercepts nothing without carrying them.

const AWAITED = new WeakMap<object, unknown>();

/**
 * The form of a bean's method for a caller of Thaw's that awaits whatever it answers (a route, a
 * job, a listener, a lifecycle hook): there its interceptors may answer with a promise where the
 * method answers with a value, since the one caller that sees the answer awaits it. A function
 * no interceptor wraps is its own form.
 */
export function awaitedForm<F>(method: F): F {
  const form = typeof method === "function" ? AWAITED.get(method) : undefined;
  return (form as F | undefined) ?? method;
}

/** Records `awaited` as the form of the interceptors' `wrapper` that {@linkcode awaitedForm} gives. */
export function setAwaitedForm(wrapper: object, awaited: object): void {
  AWAITED.set(wrapper, awaited);
}
