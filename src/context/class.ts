// The one type every layer names a class by: kept apart from the container's records, so that a
// module that only names a class loads none of them.

/** A class's constructor, as the container and decorators see it. */
// deno-lint-ignore no-explicit-any
export type Class<T = unknown> = abstract new (...args: any[]) => T;
