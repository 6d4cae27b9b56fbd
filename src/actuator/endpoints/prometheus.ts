// `prometheus`: the request metrics, the process's and the app's own meters, for Prometheus.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { available } from "../actuator_endpoint.ts";
import { endpointRoute } from "../endpoint_route.ts";
import {
  OPENMETRICS_CONTENT_TYPE,
  prefersOpenMetrics,
  PROMETHEUS_TEXT_CONTENT_TYPE,
  toOpenMetrics,
} from "../openmetrics.ts";

/**
 * The `prometheus` endpoint, where OpenTelemetry's packages are there (named in `include`, the
 * telemetry refused to start without them). The process's series are observed while it is served.
 */
export const prometheusEndpoint: ActuatorEndpoint<"prometheus"> = {
  id: "prometheus",
  unavailable: ({ telemetry }) =>
    telemetry.scrape === undefined ? "prometheus needs OpenTelemetry's packages" : undefined,
  routes: ({ base, telemetry }) => {
    const scrape = available(telemetry.scrape, "prometheus", "a scrape");
    // OpenMetrics for a scraper that asks for it first (Prometheus does), the text format else;
    // `Vary`, since one URL answers both.
    const route = endpointRoute("GET", `${base}/prometheus`, async (c) => {
      const text = await scrape();
      // The text format where OpenMetrics cannot say all of it (names that clash).
      const open = prefersOpenMetrics(c.req.header("accept")) ? toOpenMetrics(text) : undefined;
      return new Response(open ?? text, {
        headers: {
          "content-type": open !== undefined
            ? OPENMETRICS_CONTENT_TYPE
            : PROMETHEUS_TEXT_CONTENT_TYPE,
          "cache-control": "no-store",
          vary: "Accept",
        },
      });
    });
    // The process's series; its monitors stop with the app's last step before the beans, so that
    // a scrape while requests drain still reads them.
    const unobserve = telemetry.runtime?.observe();
    return { routes: [route], close: () => void unobserve?.() };
  },
};
