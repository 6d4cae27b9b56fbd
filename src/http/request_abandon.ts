// What a request abandoned by the app must stop: its upload's read and temporary files. The
// request timeout (src/web/request_timeout.ts) abandons a request once it has answered 503; what
// reads the request's body (multipart_reader.ts) registers here, by the request the server handed
// over, what to stop then. A request no one abandons leaves its entry to the garbage collector.

const hooks = /* @__PURE__ */ new WeakMap<Request, Set<() => void | Promise<void>>>();
const abandoned = /* @__PURE__ */ new WeakSet<Request>();

/**
 * Runs `stop` when `request` is abandoned (at once if it is already); gives the function that
 * unregisters it.
 */
export function onAbandon(request: Request, stop: () => void | Promise<void>): () => void {
  if (abandoned.has(request)) {
    void Promise.resolve().then(stop).catch(() => {});
    return () => {};
  }
  let set = hooks.get(request);
  if (set === undefined) hooks.set(request, set = new Set());
  set.add(stop);
  return () => set.delete(stop);
}

/**
 * Abandons `request`: runs what was registered for it, once; resolves when all of it is done (the
 * files deleted). A later call does nothing.
 */
export async function abandonRequest(request: Request): Promise<void> {
  if (abandoned.has(request)) return;
  abandoned.add(request);
  const set = hooks.get(request);
  hooks.delete(request);
  // One failing must not keep the others from running.
  await Promise.all([...set ?? []].map((stop) => Promise.resolve().then(stop).catch(() => {})));
}

/** Whether `request` was abandoned: its handler must not start. */
export function isAbandoned(request: Request): boolean {
  return abandoned.has(request);
}
