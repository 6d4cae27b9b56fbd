// The promise an `@Async` call returns: one that knows whether anyone awaited it, so that a
// failure nobody will see is logged, and never an unhandled rejection that stops the process.

/** A promise that records whether its `then` (`await`, `.catch`, `.finally`) was called. */
export class AsyncResult<T> extends Promise<T> {
  // What `then` makes is a plain promise: only the caller's own is watched.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** Someone awaited it, or attached a handler. */
  awaited = false;

  override then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    this.awaited = true;
    return super.then(onFulfilled, onRejected);
  }
}

/**
 * A watched promise of what `settle` gives it; `unawaited` hears a failure nobody awaited. The
 * promise itself never counts as an unhandled rejection.
 */
export function watchedResult<T>(
  settle: (resolve: (value: T) => void, reject: (error: unknown) => void) => void,
  unawaited: (error: unknown) => void,
): AsyncResult<T> {
  // Unset while `settle` runs: a failure it gives at once has had no caller to await it yet.
  let result: AsyncResult<T> | undefined = undefined;
  result = new AsyncResult<T>((resolve, reject) =>
    settle(resolve, (error) => {
      reject(error);
      // A caller that awaits a call refused at once (a full queue) gets to it within the turn.
      setTimeout(() => {
        if (result?.awaited !== true) unawaited(error);
      }, 0);
    })
  );
  // Past the watch: a handler of its own, so that the runtime never reports it unhandled.
  Promise.prototype.then.call(result, undefined, () => {});
  return result;
}
