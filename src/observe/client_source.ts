// Where the access log learns a request's client address without holding the code that finds it:
// that code (src/runtime/client_address.ts: each runtime's socket, the forwarded headers) is
// handed in here by `listen` and by the actuator, so that a worker bundle served without either
// carries none of it. Stateless: one for every app of the process.
import type { ForwardHeadersStrategy } from "../runtime/client_address.ts";

/**
 * The client address of a request, by `server.forward-headers-strategy` as `listen` or the actuator
 * checked it, once handed in.
 */
export const clientSource: {
  address?: (
    request: Request,
    env: unknown,
    strategy: ForwardHeadersStrategy | undefined,
  ) => string | undefined;
} = {};
