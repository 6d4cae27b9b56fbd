// A 1 GiB upload, sent as a multipart form to an app that puts its file in an S3 store (S3Proxy),
// raises the server's resident memory by less than 128 MiB: the body goes to the request's temp
// file, then to the store in parts, never whole in memory. Sampled by the server itself, on each
// runtime.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { connect } from "node:net";
import type { Buffer } from "node:buffer";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { scriptCommand } from "../runtime.ts";
import { bucketName, dropBucket, makeBucket, s3Request } from "./s3_server.ts";

const MiB = 1024 * 1024;
const SIZE = 1024 * MiB;

// Sends a multipart form of one file of SIZE bytes, written as the socket takes it; the answer.
function upload(url: URL): Promise<string> {
  const boundary = "thaw-upload-boundary";
  const head =
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n` +
    "content-type: application/octet-stream\r\n\r\n";
  const tail = `\r\n--${boundary}--\r\n`;
  const length = head.length + SIZE + tail.length;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.on("data", (data) => answer += data);
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.write(
      `POST /upload HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\n` +
        `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${length}\r\n\r\n${head}`,
    );
    const chunk = new Uint8Array(MiB).fill(0x61);
    let sent = 0;
    const more = () => {
      while (sent < SIZE) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once("drain", more);
      }
      socket.write(tail);
    };
    more();
  });
}

describe("a 1 GiB upload into the S3 store", () => {
  it("raises the server's resident memory by less than 128 MiB", async () => {
    const bucket = bucketName("upload");
    await makeBucket(bucket);
    const [command, args] = scriptCommand(
      fileURLToPath(new URL("../fixtures/storage/upload_server.ts", import.meta.url)),
      [bucket, process.env.UPLOAD_MODE ?? "put"],
    );
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        child.stdout.once("data", (data: Buffer) => resolve(new URL(String(data).trim())));
        child.once("exit", (code) => reject(new Error(`the server ended (${code})`)));
      });
      // The server samples its own memory every 20 ms; reading it starts a new peak.
      const memory = async () =>
        await (await fetch(new URL("/memory", url))).json() as { rss: number; peak: number };
      const { rss: before } = await memory();
      const answer = await upload(url);
      const { peak } = await memory();
      const rise = (peak - before) / MiB;
      console.log(
        `resident memory: ${(before / MiB).toFixed(1)} MiB before, rise ${rise.toFixed(1)} MiB`,
      );
      assert.match(answer, /^HTTP\/1\.1 200/, answer.slice(0, 500));
      assert.match(answer, /"size":1073741824/);
      const { status } = await s3Request("HEAD", `/${bucket}/big.bin`);
      assert.equal(status, 200);
      assert.ok(rise < 128, `the server's memory rose by ${rise.toFixed(1)} MiB`);
    } finally {
      // Ended before its bucket goes: a server still sending parts would keep it from emptying.
      if (child.exitCode === null && child.signalCode === null) {
        const ended = once(child, "exit");
        child.kill();
        await ended;
      }
    }
    await dropBucket(bucket);
  });
});
