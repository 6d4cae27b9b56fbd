// Which answer goes for a request, for a route's answer that is work still running. Middleware
// may answer in the route's place once the route has answered (a new `c.res`, an error thrown
// after `next()`): an `@SseMapping` stream that no one will read must then end, its iterator
// returned, rather than wait for the shutdown. `sendableAnswer`, the outermost middleware wherever
// there is middleware, tells what goes; without middleware, the route's answer is what goes.

/**
 * Who watches the answer that goes for a request, if middleware runs around its route: told once
 * (the outermost middleware runs once a request; the entry goes with the request). A map rather
 * than functions around it: every app with middleware carries the telling.
 */
export const answerWatchers: WeakMap<Request, (sent: Response) => void> =
  /* @__PURE__ */ new WeakMap();
