// Compile-time checks only: the binders of a mapping are its method's signature. TypeScript
// compares a method's parameters bivariantly (a method taking `number` would accept a binder
// giving `unknown`), so each check below is a conditional type, which compares strictly, and a
// failed check names what is wrong as a property the method cannot have.

import type { BinderValue } from "./binder.ts";

/** The arguments a list of binders gives a handler, in order. */
export type HandlerArguments<B extends readonly unknown[]> = {
  -readonly [K in keyof B]: BinderValue<B[K]>;
};

/**
 * The variable names a path template declares: `"/a/{id}/{*rest}"` gives `"id" | "rest"`.
 * Tail-recursive (`Found` gathers the names), so that a long path stays within the compiler's
 * depth limit.
 */
export type PathVariableNames<P extends string, Found = never> = P extends
  `${string}{${infer V}}${infer Rest}` ? PathVariableNames<Rest, Found | PathVariableName<V>>
  : Found;

/**
 * The name in a `{...}` of a path: `{name:regex}` and `{*name}` name `name` (a regex holding `{2}`
 * ends the match early, but the name comes before it).
 */
export type PathVariableName<V extends string> = V extends `*${infer N}` ? N
  : V extends `${infer N}:${string}` ? N
  : V;

/** The names the binders' `PathVariable`s give, leaving out names only run time knows. */
export type PathBinderNames<B extends readonly unknown[]> = {
  [K in keyof B]: B[K] extends { readonly "~path"?: infer N } ? string extends N ? never : N
    : never;
}[number];

/**
 * `unknown` when a path's `PathVariable` names are all declared by the path, else an error type
 * naming the first one that is not. A path that is not a literal is left to the startup check.
 */
export type PathCheck<P extends string, B extends readonly unknown[]> =
  // Not a literal (`string`, or a template such as `${base}/users/{id}`): an empty object has
  // all its keys, since a key type that is not a literal becomes an index signature.
  Record<never, never> extends Record<P, 1> ? unknown
    : Exclude<PathBinderNames<B>, PathVariableNames<P>> extends never ? unknown
    : {
      readonly "Thaw: a PathVariable names no {variable} of the mapping's path (for one of the class's prefix, give the name as a string)":
        {
          readonly names: Exclude<PathBinderNames<B>, PathVariableNames<P>>;
          readonly path: P;
        };
    };

/**
 * `never` when each parameter of `P` takes its binder's value in `A`, else an error type naming
 * the first position that does not.
 */
export type ParameterMismatch<
  A extends readonly unknown[],
  P extends readonly unknown[],
  I extends 0[] = [],
> = I["length"] extends A["length"] ? never
  : [A[I["length"]]] extends [P[I["length"]]] ? ParameterMismatch<A, P, [...I, 0]>
  : {
    readonly "Thaw: a handler parameter does not take what its binder gives": {
      readonly parameter: [...I, 0]["length"];
      readonly binderGives: A[I["length"]];
      readonly parameterTakes: P[I["length"]];
    };
  };

/** The positions of `P` whose parameter does not take `V`, as a union (`never` when all do). */
export type ParametersRefusing<P extends readonly unknown[], V> = {
  [K in keyof P]: [V] extends [P[K]] ? never : K;
}[number];

/**
 * `unknown` when a method with parameters `P` takes exactly the arguments `A` (one parameter per
 * binder, each accepting its binder's value; an optional parameter counts, as it is filled; a
 * rest parameter takes the binders left), else an error type saying what is wrong. Binders in
 * an array rather than a tuple have no known order: every parameter must take every one's type.
 */
export type SignatureCheck<P extends readonly unknown[], A extends readonly unknown[]> =
  number extends A["length"] ? [ParametersRefusing<P, A[number]>] extends [never] ? unknown
    : {
      readonly "Thaw: binders in an array may give any parameter any of their types": {
        readonly binderGives: A[number];
        readonly parameters: P;
      };
    }
    : number extends P["length"] ? [A] extends [P] ? unknown
      : {
        readonly "Thaw: a handler's rest parameter does not take what the binders give": {
          readonly binders: A;
          readonly parameters: P;
        };
      }
    : [Required<P>["length"]] extends [A["length"]]
      ? [ParameterMismatch<A, P>] extends [never] ? unknown
      : ParameterMismatch<A, P>
    : {
      readonly "Thaw: a handler takes one parameter per binder": {
        readonly binders: A["length"];
        readonly parameters: Required<P>["length"];
      };
    };
