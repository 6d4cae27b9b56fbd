import process from "node:process";
import { S3Driver } from "../../src/storage/s3_driver.ts";
import { ObjectStorage } from "../../src/storage/object_storage.ts";
import { bucketName, makeBucket, s3Settings } from "./s3_server.ts";
import { patternStream } from "./conformance.ts";
const bucket = bucketName("mem");
await makeBucket(bucket);
const s = new ObjectStorage("u", new S3Driver(s3Settings(bucket)));
const rss = () => process.memoryUsage().rss / 1048576;
const before = rss();
let peak = before;
const t = setInterval(() => peak = Math.max(peak, rss()), 50);
const n = Number(process.argv[2]);
await s.put("big", patternStream(n * 1048576, 1, 65536));
clearInterval(t);
console.log(
  `direct put ${process.argv[2]} MiB: before ${before.toFixed(0)} peak rise ${
    (peak - before).toFixed(0)
  } MiB`,
);
