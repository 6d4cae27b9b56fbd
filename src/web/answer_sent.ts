// Which answer goes for a request, for a route's answer that is work still running. Middleware
// may answer in the route's place once the route has answered (a new `c.res`, an error thrown
// after `next()`): an `@SseMapping` stream that no one will read must then end, its iterator
// returned, rather than wait for the shutdown. `sendableAnswer`, the outermost middleware wherever
// there is middleware, tells what goes; without middleware, the route's answer is what goes.

const watchers = /* @__PURE__ */ new WeakMap<Request, (sent: Response) => void>();

/** Gives `watch` the answer that goes for `request`, if middleware runs around its route. */
export function watchAnswer(request: Request, watch: (sent: Response) => void): void {
  watchers.set(request, watch);
}

/** `sent` is the answer that goes for `request`: tells whoever watches it, once. */
export function answerSent(request: Request, sent: Response): void {
  const watch = watchers.get(request);
  if (watch === undefined) return;
  watchers.delete(request);
  watch(sent);
}
