// Whether the code runs on workerd (Cloudflare Workers, `wrangler dev`): its `navigator.userAgent`
// says so. Asked before anything that reads `process`: with `nodejs_compat`, or a compatibility date
// that implies it, workerd has a `process` whose Node version and pid (1) are stand-ins.

/** The `navigator.userAgent` workerd answers. */
export const WORKERD_USER_AGENT = "Cloudflare-Workers";

/** True on workerd, whatever its compatibility flags. */
export function onWorkerd(): boolean {
  const g = globalThis as { navigator?: { userAgent?: unknown } };
  return g.navigator?.userAgent === WORKERD_USER_AGENT;
}
