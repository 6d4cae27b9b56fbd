// An async listener runs apart from the call that published its event, as Spring's runs on
// another thread: what binds state to an async call (a transaction, in transaction_scope.ts)
// registers here how to run a function without it, and the multicaster starts each async run so.
// The events know nothing of what registers.

/** Runs `fn` outside the state one kind of binding keeps for the current async call. */
export type Leave = <T>(fn: () => T) => T;

const leaves: Leave[] = [];

/** Registers how to leave one kind of binding; registering the same function again does nothing. */
export function registerDetach(leave: Leave): void {
  if (!leaves.includes(leave)) leaves.push(leave);
}

/** Runs `fn` outside every binding registered: in none of the caller's transactions. */
export function runDetached<T>(fn: () => T): T {
  let run = fn;
  for (const leave of leaves) {
    const inner = run;
    run = () => leave(inner);
  }
  return run();
}
