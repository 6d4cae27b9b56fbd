/**
 * Runs a call a migration's code made (`ctx.query`, `ctx.request`) and, when it fails, gives the
 * error the stack of the call itself: the frames of the driver's socket callbacks say nothing,
 * and where async stack traces are missing (JavaScriptCore) they would not reach the migration's
 * file at all. Its first frame in the file is then the line of the `await ctx.query(...)`.
 */
export async function atCallSite<T>(call: () => Promise<T>): Promise<T> {
  const site = new Error();
  try {
    // Called inside the try: a check that throws at once gets the call's line too.
    return await call();
  } catch (error) {
    if (error instanceof Error && typeof site.stack === "string") {
      const frames = site.stack.slice(site.stack.indexOf("\n") + 1);
      error.stack = `${error.name}: ${error.message}\n${frames}`;
    }
    throw error;
  }
}
