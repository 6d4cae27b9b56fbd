// The request histogram `http.server.request.duration`, with OpenTelemetry's HTTP attributes.
// A raw path never becomes an attribute: the route is the template, or a fixed value when no
// route took the request, and the method is one of the HTTP methods or `_OTHER`.
import type { Attributes, Histogram } from "@opentelemetry/api";
import type { RequestObserver } from "../observe/request_observer.ts";

/** Records each request in the histogram `histogram()` gives at that moment. */
export function metricsObserver(histogram: () => Histogram): RequestObserver {
  return async (exchange, proceed) => {
    const start = performance.now();
    const record = (status: number, errorType?: string) => {
      const attributes: Attributes = {
        "http.request.method": exchange.method,
        "http.route": exchange.route(),
        "http.response.status_code": status,
      };
      if (errorType !== undefined) attributes["error.type"] = errorType;
      histogram().record((performance.now() - start) / 1000, attributes);
    };
    let response: Response;
    try {
      response = await proceed();
    } catch (error) {
      record(500, error instanceof Error ? error.constructor.name : "_OTHER");
      throw error;
    }
    record(response.status, response.status >= 500 ? String(response.status) : undefined);
    return response;
  };
}
