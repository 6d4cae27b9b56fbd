// The values for the instance under construction, keyed by field. The container resolves a class's
// dependencies and configuration values first and then constructs it with this set, so the field
// initializers of `@Autowired` and `@Value` pick them up: such fields are usable in the
// constructor, and `#private` fields work too. Module-level as a constructor takes no extra
// argument: the field initializers read it while `constructWith` runs, synchronously.
let pending: ReadonlyMap<symbol, unknown> | undefined;

/** Constructs `cls` with its container-filled fields set from `values`. */
export function constructWith<T>(cls: new () => T, values: ReadonlyMap<symbol, unknown>): T {
  const outer = pending;
  pending = values;
  try {
    return new cls();
  } finally {
    pending = outer;
  }
}

/**
 * What a container-filled field starts as: the container's value for `key` while the container
 * constructs the instance, else the field's own initial value (a class built with `new`).
 */
export function injectedOr<V>(key: symbol, initial: V): V {
  return pending !== undefined && pending.has(key) ? pending.get(key) as V : initial;
}

/**
 * The key of a bean's method that gives each class whose field asks for the bean a value of its
 * own (a logger named after the class): the container calls it with the class it constructs, and
 * injects what it returns instead of the bean.
 */
export const FOR_CLASS: unique symbol = Symbol();
