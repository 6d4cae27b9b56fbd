/** How often the platform's decoders ran, and how often they threw. */
export interface DecodeCounts {
  calls: number;
  throws: number;
}

/**
 * Runs `read`, counting calls to `decodeURIComponent` and `TextDecoder.prototype.decode` and the
 * calls that threw: a reader that tells bad bytes by catching a decoder's error pays for an
 * exception per bad pair, and one that decodes per byte pays a call per byte. The spies are
 * removed when `read` settles.
 */
export async function countDecodes(read: () => unknown): Promise<DecodeCounts> {
  const counts = { calls: 0, throws: 0 };
  const decodeUri = globalThis.decodeURIComponent;
  const decode = TextDecoder.prototype.decode;
  const counted = <A extends unknown[], R>(f: (...args: A) => R) =>
    function (this: unknown, ...args: A): R {
      counts.calls++;
      try {
        return f.apply(this, args);
      } catch (error) {
        counts.throws++;
        throw error;
      }
    };
  globalThis.decodeURIComponent = counted(decodeUri);
  TextDecoder.prototype.decode = counted(decode);
  try {
    // The spies must see calls, or every count would pass for want of them.
    decodeURIComponent("%41");
    new TextDecoder().decode(new Uint8Array([0x41]));
    if (counts.calls !== 2) throw new Error("the decoders could not be spied on");
    counts.calls = 0;
    await read();
  } finally {
    globalThis.decodeURIComponent = decodeUri;
    TextDecoder.prototype.decode = decode;
  }
  return counts;
}
