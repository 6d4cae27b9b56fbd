// What a stream or a socket carries of the request that opened it into the calls that come once
// its handler has returned (each pull of an `@SseMapping` iterator, each event of a socket): the
// runtimes make those calls from their own servers, some inside the request's async context and
// some outside it. The security feature registers how to keep the request's caller, so that the
// same caller, and no other, is seen on every runtime; src/web itself binds nothing and imports no
// `node:` module for it (a worker without nodejs_compat streams too).

/** Runs a function as a call of the request that opened the stream. */
export type CallContext = <T>(fn: () => T) => T;

/** Reads, in the request's async context, what to carry: none when there is nothing. */
export type KeepCallContext = () => CallContext | undefined;

const asItIs: CallContext = (fn) => fn();
// Module-level as the registration is the feature's, made once for the process by its import.
let keep: KeepCallContext | undefined;

/** Registers what later calls keep of a request (the security feature's caller); once is enough. */
export function registerCallContext(keeper: KeepCallContext): void {
  keep = keeper;
}

/** What the current request's later calls run in: called where the stream or socket is opened. */
export function callContext(): CallContext {
  return keep?.() ?? asItIs;
}
