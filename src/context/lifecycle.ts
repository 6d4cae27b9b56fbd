import { awaitedForm } from "./awaited_form.ts";
import { classesOf, entryOf, type MethodAccess, methodAccess, ownEntry } from "./class_record.ts";

/**
 * What {@linkcode PostConstruct} and {@linkcode PreDestroy} return: a decorator for an instance
 * method the container calls without arguments, once the bean is built or when it stops.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#lifecycledecorator
 */
export type LifecycleDecorator = <This>(
  value: (this: This) => unknown,
  context: ClassMethodDecoratorContext<This, (this: This) => unknown>,
) => void;

/** When a lifecycle hook runs. */
export type LifecyclePhase = "postConstruct" | "preDestroy";

/** A hook method found on a bean, ready to call. */
export interface LifecycleHook {
  /** As written in the class: `open`, `#close`. */
  readonly methodName: string;
  /** Calls the hook on the bean it was found on; a promise when the hook is async. */
  readonly run: () => unknown;
}

type LifecycleEntry = Record<LifecyclePhase, MethodAccess[]>;

const LIFECYCLE = Symbol("thaw.lifecycle");

function lifecycleDecorator(phase: LifecyclePhase, decorator: string): LifecycleDecorator {
  return <This>(
    _value: (this: This) => unknown,
    context: ClassMethodDecoratorContext<This, (this: This) => unknown>,
  ): void => {
    const access = methodAccess(decorator, _value, context as ClassMethodDecoratorContext);
    const entry = ownEntry<LifecycleEntry>(
      context.metadata,
      LIFECYCLE,
      () => ({ postConstruct: [], preDestroy: [] }),
    );
    entry[phase].push(access);
  };
}

/**
 * Marks a method that the container calls once a bean is constructed and its fields are set, and
 * before the bean is given to any bean that uses it: so a bean's hook runs after the hooks of the
 * beans it uses. It may be `async`; `bootstrap` waits for it. One that throws stops `bootstrap`,
 * naming the class and the method, after the `@PreDestroy` hooks of the beans already started have
 * run (the latest first).
 *
 * It works on any bean whose class (or a superclass) declares it, `@Bean` methods' results
 * included: a superclass's hooks run first, and a method a subclass overrides runs once, as the
 * subclass has it. A bean given by `bootstrap({ overrides })` is not started.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#postconstruct
 */
export function PostConstruct(): LifecycleDecorator {
  return lifecycleDecorator("postConstruct", "PostConstruct");
}

/**
 * Marks a method that `app.close()` calls once, to release what the bean holds (connections,
 * timers, files). Beans stop in the reverse of the order they started, so a bean stops before the
 * beans it uses. It may be `async`; each is bounded by `server.shutdown-timeout` (seconds, 30 by
 * default), and one that fails or times out does not stop the others: `app.close()` rejects at the
 * end with an `AggregateError` naming each.
 *
 * Within one bean, the subclass's hooks run before its superclass's (the reverse of
 * {@linkcode PostConstruct}), so that a subclass lets go of what it built on its parent first.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#predestroy
 */
export function PreDestroy(): LifecycleDecorator {
  return lifecycleDecorator("preDestroy", "PreDestroy");
}

/**
 * The hooks of one phase that a bean's class chain declares, in the order they run: for
 * `postConstruct` the most basic class's first, for `preDestroy` the most derived class's first;
 * within a class, as written. A public method declared more than once (overridden) appears once.
 */
export function lifecycleHooks(instance: unknown, phase: LifecyclePhase): LifecycleHook[] {
  // Walked from the instance's prototypes, not its `constructor` property: the bean may be any
  // object a `@Bean` method returned.
  const entries: LifecycleEntry[] = [];
  for (const cls of classesOf(instance)) {
    const entry = entryOf<LifecycleEntry>(cls, LIFECYCLE);
    if (entry !== undefined) entries.push(entry);
  }
  if (phase === "postConstruct") entries.reverse();
  const seen = new Set<unknown>();
  const hooks: LifecycleHook[] = [];
  for (const entry of entries) {
    for (const record of entry[phase]) {
      if (seen.has(record.identity)) continue;
      seen.add(record.identity);
      hooks.push({
        methodName: record.methodName,
        run: () => (awaitedForm(record.get(instance)) as (this: unknown) => unknown).call(instance),
      });
    }
  }
  return hooks;
}
