/**
 * What `ObjectStorage` costs over the bare client of the same store, in the same run, on the
 * runtime that runs this file (`npm run bench:storage` runs it on Deno, Bun and Node 26, with
 * S3Proxy started by `tools/s3proxy.sh start`):
 *
 *   deno run -A bench/storage.ts [--rounds 7] [--small 200] [--large 64]
 *
 * Two stores, each against its bare client doing the same work:
 * - S3 (S3Proxy): Thaw's S3 store against requests signed by aws4fetch and sent by `fetch`, as a
 *   hand-written client would (one PutObject, one GetObject read to its end);
 * - the disk: Thaw's file store against `node:fs/promises` with the same guarantee, a temp file
 *   written, synced and renamed over the target; a read is `readFile`.
 * Each round puts and gets `small` objects of 1 KiB, one at a time, then one object of `large`
 * MiB, with each contestant in turn (the first swapped every round). Reported: the medians of the
 * wall time and of this process's CPU time (`process.cpuUsage()`; the server's is not counted),
 * per operation for the small objects and per MiB for the large one, and the median of the ratio
 * Thaw / bare of the same round.
 *
 * @module
 */
import { mkdtemp, open, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { AwsV4Signer } from "aws4fetch";
import { FileDriver } from "../src/storage/file_driver.ts";
import { ObjectStorage } from "../src/storage/object_storage.ts";
import { S3Driver } from "../src/storage/s3_driver.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "7" },
    small: { type: "string", default: "200" },
    large: { type: "string", default: "64" },
  },
});
const rounds = Number(values.rounds);
const small = Number(values.small);
const largeMiB = Number(values.large);
const ENDPOINT = "http://127.0.0.1:9310";
const CREDENTIALS = { accessKeyId: "thaw", secretAccessKey: "thaw-secret" };
const bucket = `bench-storage-${process.pid}`;
const MiB = 1024 * 1024;

/** One contestant: put and get an object by key. */
interface Contestant {
  put(key: string, bytes: Uint8Array): Promise<unknown>;
  get(key: string): Promise<number>;
}

async function signed(method: string, path: string, body?: Uint8Array): Promise<Response> {
  const request = await new AwsV4Signer({
    method,
    url: `${ENDPOINT}/${bucket}${path}`,
    ...CREDENTIALS,
    region: "us-east-1",
    service: "s3",
    headers: { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
  }).sign();
  return fetch(request.url, {
    method,
    headers: request.headers,
    ...(body === undefined ? {} : { body: body as Uint8Array<ArrayBuffer> }),
  });
}

const bareS3: Contestant = {
  async put(key, bytes) {
    const answer = await signed("PUT", `/${key}`, bytes);
    await answer.arrayBuffer();
    if (!answer.ok) throw new Error(`bare put: ${answer.status}`);
  },
  async get(key) {
    const answer = await signed("GET", `/${key}`);
    const bytes = await answer.arrayBuffer();
    if (!answer.ok) throw new Error(`bare get: ${answer.status}`);
    return bytes.byteLength;
  },
};

function thaw(storage: ObjectStorage): Contestant {
  return {
    put: (key, bytes) => storage.put(key, bytes),
    async get(key) {
      const found = await storage.get(key);
      return (await new Response(found?.body).arrayBuffer()).byteLength;
    },
  };
}

function bareDisk(folder: string): Contestant {
  return {
    async put(key, bytes) {
      const temp = join(folder, `.tmp-${crypto.randomUUID()}`);
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, join(folder, key));
    },
    async get(key) {
      return (await readFile(join(folder, key))).byteLength;
    },
  };
}

/** Wall and CPU time, in µs, of `work`. */
async function timed(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - start) * 1000, cpu: used.user + used.system };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Each measure's figures per round, Thaw's and the bare client's. */
type Figures = Map<string, { thaw: number[]; bare: number[] }>;

function record(figures: Figures, name: string, who: "thaw" | "bare", value: number): void {
  const entry = figures.get(name) ?? { thaw: [], bare: [] };
  entry[who].push(value);
  figures.set(name, entry);
}

async function race(
  store: string,
  contestants: Record<"thaw" | "bare", Contestant>,
): Promise<void> {
  const figures: Figures = new Map();
  const smallBytes = new Uint8Array(1024).fill(7);
  const largeBytes = new Uint8Array(largeMiB * MiB).fill(9);
  for (let round = 0; round < rounds; round++) {
    const order: ("thaw" | "bare")[] = round % 2 === 0 ? ["thaw", "bare"] : ["bare", "thaw"];
    for (const who of order) {
      const c = contestants[who];
      const puts = await timed(async () => {
        for (let i = 0; i < small; i++) await c.put(`${who}-small-${i}`, smallBytes);
      });
      const gets = await timed(async () => {
        for (let i = 0; i < small; i++) await c.get(`${who}-small-${i}`);
      });
      const bigPut = await timed(() => c.put(`${who}-large`, largeBytes));
      const bigGet = await timed(() => c.get(`${who}-large`));
      // The first round warms both: not counted.
      if (round === 0) continue;
      for (
        const [name, time, per] of [
          ["put 1 KiB", puts, small],
          ["get 1 KiB", gets, small],
          [`put ${largeMiB} MiB`, bigPut, largeMiB],
          [`get ${largeMiB} MiB`, bigGet, largeMiB],
        ] as const
      ) {
        record(figures, `${name} wall`, who, time.wall / per);
        record(figures, `${name} CPU`, who, time.cpu / per);
      }
    }
  }
  for (const [name, { thaw, bare }] of figures) {
    const ratios = thaw.map((t, i) => t / (bare[i] as number));
    const unit = name.includes("MiB") ? "µs/MiB" : "µs/op";
    console.log(
      `${store.padEnd(5)} ${name.padEnd(18)} Thaw ${median(thaw).toFixed(0).padStart(7)} ` +
        `bare ${median(bare).toFixed(0).padStart(7)} ${unit}  Thaw/bare ${
          median(ratios).toFixed(2)
        }x`,
    );
  }
}

const runtime = "Deno" in globalThis
  ? "deno"
  : "Bun" in globalThis
  ? "bun"
  : `node ${process.version}`;
console.log(
  `storage bench on ${runtime}: ${
    rounds - 1
  } rounds counted, ${small} objects of 1 KiB, one of ${largeMiB} MiB`,
);
const made = await signed("PUT", "");
await made.arrayBuffer();
if (!made.ok) {
  throw new Error(`making the bucket: ${made.status} (is S3Proxy started? tools/s3proxy.sh start)`);
}
const s3 = new ObjectStorage(
  "bench",
  new S3Driver({
    bucket,
    region: "us-east-1",
    endpoint: ENDPOINT,
    pathStyle: true,
    ...CREDENTIALS,
    prefix: "",
    timeoutMs: 30_000,
  }),
);
try {
  await race("s3", { thaw: thaw(s3), bare: bareS3 });
} finally {
  // S3Proxy keeps objects on this machine's disk until its next start.
  for await (const object of s3.list("")) await s3.delete(object.key);
  const dropped = await signed("DELETE", "");
  await dropped.arrayBuffer();
  if (!dropped.ok) console.error(`the bench's bucket ${bucket} is left: ${dropped.status}`);
}
const folder = await mkdtemp(join(tmpdir(), "thaw-bench-storage-"));
try {
  await race("disk", {
    thaw: thaw(new ObjectStorage("bench", new FileDriver(join(folder, "thaw")))),
    bare: bareDisk(await mkdtemp(join(folder, "bare-"))),
  });
} finally {
  await rm(folder, { recursive: true, force: true });
}
