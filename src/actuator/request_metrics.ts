// The request histogram `http.server.request.duration`, with OpenTelemetry's HTTP attributes.
// A raw path never becomes an attribute: the route is the template, or a fixed value when no
// route took the request, and the method is one of the HTTP methods or `_OTHER`.
import type { Attributes, Histogram } from "@opentelemetry/api";
import { errorType, type RequestObserver } from "../observe/request_observer.ts";

/**
 * Records each request in every histogram `histograms()` gives at that moment; idle while each
 * is `noop` (no meter provider registered).
 */
export function metricsObserver(
  histograms: () => readonly Histogram[],
  noop?: Histogram,
): RequestObserver {
  const observe: RequestObserver = async (exchange, proceed) => {
    const start = performance.now();
    const record = (status: number, failure?: string) => {
      const attributes: Attributes = {
        "http.request.method": exchange.method,
        "http.route": exchange.route(),
        "http.response.status_code": status,
      };
      if (failure !== undefined) attributes["error.type"] = failure;
      const seconds = (performance.now() - start) / 1000;
      for (const histogram of histograms()) histogram.record(seconds, attributes);
    };
    let response: Response;
    try {
      response = await proceed();
    } catch (error) {
      record(500, errorType(500, error));
      throw error;
    }
    record(response.status, errorType(response.status));
    return response;
  };
  return noop === undefined
    ? observe
    : Object.assign(observe, { idle: () => histograms().every((h) => h === noop) });
}
