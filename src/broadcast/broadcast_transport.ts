// The one narrow seam between the broadcaster and what carries its messages to every replica:
// the process itself, Redis pub/sub, or a Kafka topic. A transport moves wire texts and nothing
// else: it neither reads them nor knows the channels.

/** What carries a broadcaster's messages to every replica of the app, its own included. */
export interface BroadcastTransport {
  /** What it is, for messages: `Redis at redis://cache:6379 (channel thaw:broadcast)`. */
  readonly name: string;
  /**
   * Begins receiving: `receive` is called with each wire text published by any replica from the
   * moment this resolves on, in the order the transport keeps (per channel, at least).
   */
  start(receive: (text: string) => void): Promise<void>;
  /** Sends one wire text to every replica; resolves once the transport took it. */
  publish(channel: string, text: string): Promise<void>;
  /** Stops receiving and lets its connections go. */
  close(): Promise<void>;
}
