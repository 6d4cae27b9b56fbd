// Reads a request's `multipart/form-data` body into its parts. A body no longer than
// `server.max-body-size` (declared so, or read already by the server or a middleware) is read
// whole, as a JSON body is, through the request's own reader, so that a handler given the
// `HttpRequest` reads the same bytes; its parts stay in memory. Any other body is parsed as it
// arrives: text parts and file parts up to `server.multipart.file-size-threshold` in memory, larger
// file parts in temporary files, which are deleted when the answer is made, or at once when the
// body is refused or the client goes away. Either way the `server.multipart.*` limits hold, and the
// first byte over one is the last read.
import { bodyArrival } from "./body_arrival.ts";
import { type FormBody, multipartBody } from "./form_body.ts";
import { HttpException } from "./http_exception.ts";
import type { HttpRequest } from "./http_request.ts";
import { HttpStatus } from "./http_status.ts";
import {
  joined,
  type MultipartLimits,
  MultipartParser,
  type MultipartPart,
  type MultipartSink,
  type PartHead,
} from "./multipart.ts";
import { canSpool, type SpoolFile, UploadSpool } from "./multipart_spool.ts";
import { abandonBody, bodyStreamed } from "./read_body.ts";
import { onAbandon } from "./request_abandon.ts";

const EMPTY = /* @__PURE__ */ new Uint8Array(0);

/** How the request's body can be had. */
export interface MultipartSource {
  /** The request as the server handed it. */
  readonly raw: Request;
  /** Its reader, which reads a body whole under `server.max-body-size`. */
  readonly request: HttpRequest;
  /** Its `Content-Length`, as sent, or `null`. */
  readonly declaredLength: string | null;
  /** Whether the server read the body before the app ran (Node's listener does, within the limit). */
  readonly readAlready: boolean;
}

/**
 * The parts of the body, in order. Rejects with a 400 for a malformed body or one cut short, a
 * 413 naming the limit it passed; a declared length over `maxRequestSize` is refused before a byte
 * is read. A body read as it arrives and refused, or cut short, has its temporary files deleted
 * before the promise rejects; those of a body read to its end are the `release` of its form.
 */
export function readMultipart(
  source: MultipartSource,
  boundary: string,
  limits: MultipartLimits,
): Promise<FormBody> {
  try {
    const { raw, request, declaredLength, readAlready } = source;
    const declared = declaredLength !== null && /^\d+$/.test(declaredLength)
      ? Number(declaredLength)
      : undefined;
    if (declared !== undefined && declared > limits.maxRequestSize) {
      throw new HttpException(
        HttpStatus.CONTENT_TOO_LARGE,
        `Multipart body exceeds ${limits.maxRequestSize} bytes (server.multipart.max-request-size)`,
      );
    }
    if (readAlready || (declared !== undefined && declared <= limits.readWhole) || raw.bodyUsed) {
      return request.bytes().then((bytes) => {
        const parts = new Parts(undefined, limits.fileSizeThreshold, false);
        const parser = new MultipartParser(boundary, parts, {
          ...limits,
          maxFieldSize: limits.readWhole,
        });
        parser.write(bytes);
        parser.end();
        return multipartBody(parts.list);
      });
    }
    // Its files written as it arrives count as waiting on it: the client waits on them too.
    return bodyArrival(raw, readStreamed(raw, boundary, limits));
  } catch (error) {
    return Promise.reject(error);
  }
}

async function readStreamed(
  raw: Request,
  boundary: string,
  limits: MultipartLimits,
): Promise<FormBody> {
  const stream = raw.body;
  if (stream === null) return multipartBody([]);
  const reader = stream.getReader();
  bodyStreamed(raw);
  const spool = canSpool() ? new UploadSpool(limits.location) : undefined;
  const parts = new Parts(spool, limits.fileSizeThreshold, true);
  const parser = new MultipartParser(boundary, parts, {
    ...limits,
    maxFieldSize: limits.readWhole,
  });
  let ended = false;
  // A request the app abandons (its timeout answered already) stops here: the read waiting on the
  // client ends, the rest is not read, and the files go, now or while a handler still has them.
  const abandoned = new HttpException(HttpStatus.SERVICE_UNAVAILABLE, "Request abandoned");
  const stop = new Stop(abandoned);
  const forget = onAbandon(raw, () => {
    stop.now();
    return spool?.release();
  });
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await stop.race(reader.read());
      } catch (error) {
        if (error === abandoned) throw error;
        // The client closed, reset or aborted before the body's end (as read_body.ts answers).
        ended = true;
        throw new HttpException(
          HttpStatus.BAD_REQUEST,
          "Request body ended before it was complete",
        );
      }
      if (next.done) {
        ended = true;
        break;
      }
      parser.write(next.value);
      // What the chunk gave is on disk before the next is asked for: the client waits for it.
      await stop.race(parts.settled());
    }
    parser.end();
    await stop.race(parts.settled());
    if (spool === undefined) {
      forget();
      return multipartBody(parts.list);
    }
    // Registered until the files are gone: a timeout due meanwhile answers once they are.
    return multipartBody(parts.list, () => spool.release().finally(forget));
  } catch (error) {
    if (!ended) {
      // The rest of the body is left unread: the server must not read it either.
      abandonBody(raw);
      await reader.cancel().catch(() => {});
    }
    await parts.abandon();
    forget();
    throw error;
  }
}

/**
 * Ends the wait on a read or a write when the request is abandoned. Each wait is raced alone and
 * forgotten when it settles: racing every read against one promise that never settles (as
 * `Promise.race` does) leaves a reaction on it per read, and each keeps its chunk alive until the
 * request is gone, the whole body, on every runtime.
 */
class Stop {
  readonly #reason: unknown;
  #stopped = false;
  #waiting: ((reason: unknown) => void) | undefined;

  constructor(reason: unknown) {
    this.#reason = reason;
  }

  /** Rejects the wait under way, and every later one, with the reason. */
  now(): void {
    this.#stopped = true;
    this.#waiting?.(this.#reason);
    this.#waiting = undefined;
  }

  /** `work`'s outcome, or the reason if the request is abandoned first. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.#stopped) {
      work.catch(() => {});
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.#waiting = reject;
      work.then(resolve, reject).finally(() => {
        if (this.#waiting === reject) this.#waiting = undefined;
      });
    });
  }
}

/** A part as it is being read. */
interface PartInProgress {
  readonly head: PartHead;
  readonly entry: { -readonly [K in keyof MultipartPart]: MultipartPart[K] };
  chunks: Uint8Array[];
  size: number;
  file?: SpoolFile;
  spooled: boolean;
}

// A spooled part's file: the queued work made it before any that writes to it runs.
function spooledFile(part: PartInProgress): SpoolFile {
  if (part.file === undefined) throw new Error("multipart: a part was spooled before its file");
  return part.file;
}

/**
 * Collects the parts the parser hands over: in memory, or, for a file part past `threshold` when
 * there is a spool, in a temporary file. The spool's work is queued in order and awaited between
 * chunks (`settled`), so that at most one chunk's worth of it is ever waiting.
 */
class Parts implements MultipartSink {
  /** The parts read, in order; a spooled one gets its `file` once it is whole. */
  readonly list: MultipartPart[] = [];
  readonly #spool: UploadSpool | undefined;
  readonly #threshold: number;
  // A part kept in memory is copied out of the chunk it came in, which may be far larger: a few
  // bytes of text must not keep 64 KiB of file alive. A body read whole is in memory anyway.
  readonly #copy: boolean;
  #current: PartInProgress | undefined;
  #work: Promise<void> = Promise.resolve();

  constructor(spool: UploadSpool | undefined, threshold: number, copy: boolean) {
    this.#spool = spool;
    this.#threshold = threshold;
    this.#copy = copy;
  }

  part(head: PartHead): void {
    const entry = { ...head, body: EMPTY };
    this.list.push(entry);
    this.#current = { head, entry, chunks: [], size: 0, spooled: false };
  }

  data(chunk: Uint8Array): void {
    const part = this.#part();
    part.size += chunk.byteLength;
    // The chunks come from the body's stream, which hands each over for good: a view of one
    // stays as it is while the queued write waits.
    if (part.spooled) return this.#then(() => spooledFile(part).write(chunk));
    const spool = this.#spool;
    const { name, filename, contentType } = part.head;
    if (spool !== undefined && filename !== undefined && part.size > this.#threshold) {
      part.spooled = true;
      const held = part.chunks;
      part.chunks = [];
      return this.#then(async () => {
        // RFC 7578, 4.4: a part without a Content-Type is text/plain.
        const file = part.file = await spool.create(name, filename, contentType ?? "text/plain");
        for (const before of held) await file.write(before);
        await file.write(chunk);
      });
    }
    part.chunks.push(this.#copy ? chunk.slice() : chunk);
  }

  end(): void {
    const part = this.#part();
    this.#current = undefined;
    if (!part.spooled) {
      part.entry.body = joined(part.chunks);
      return;
    }
    this.#then(async () => {
      part.entry.file = await spooledFile(part).finish();
    });
  }

  // The parser hands a part's data and end over after its head.
  #part(): PartInProgress {
    const part = this.#current;
    if (part === undefined) throw new Error("multipart: a part's data came before its head");
    return part;
  }

  /** Waits for the queued work; rejects with its first failure. */
  settled(): Promise<void> {
    return this.#work;
  }

  /** Waits for what was queued, failed or not, and deletes every file it made. */
  async abandon(): Promise<void> {
    await this.#work.catch(() => {});
    await this.#spool?.release();
  }

  #then(step: () => Promise<void>): void {
    this.#work = this.#work.then(step);
  }
}
