import { Deferred } from "../src/runtime/deferred.ts";

/** A promise with its resolve and reject in hand. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  return new Deferred<T>();
}
