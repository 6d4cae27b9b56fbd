// One way to bound a wait on a promise by a time, for the calls to a store or a broker that may
// never answer: each wrote its own race of a promise and a timer before.

/**
 * `promise`'s outcome, or, once `ms` passed with it still pending, a rejection with what `late()`
 * gives. The timer is cleared as soon as `promise` settles. A rejection of `promise` after the
 * deadline is nobody's to hear: it is taken here, never an unhandled rejection.
 */
export function deadline<T>(promise: PromiseLike<T>, ms: number, late: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
