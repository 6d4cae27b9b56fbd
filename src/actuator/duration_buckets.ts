// The bucket boundaries OpenTelemetry's semantic conventions advise for a duration histogram in
// seconds: the same list for HTTP's `http.server.request.duration` and for messaging's
// `messaging.process.duration`, so that Thaw's duration histograms line up in one dashboard.

/** The semantic conventions' advised buckets for durations, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10,
];
