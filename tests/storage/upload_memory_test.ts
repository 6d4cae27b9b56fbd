// A 1 GiB upload, sent as a multipart form to an app that puts its file in an S3 store (S3Proxy),
// raises the server's resident memory by less than 128 MiB: the body goes to the request's temp
// file, then to the store in parts, never whole in memory. Measured from /proc, on each runtime.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import type { Buffer } from "node:buffer";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { scriptCommand } from "../runtime.ts";
import { bucketName, makeBucket, s3Request } from "./s3_server.ts";

const MiB = 1024 * 1024;
const SIZE = 1024 * MiB;

// The resident memory of a process, in bytes (Linux).
function residentOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB$/m);
  return line === null ? 0 : Number(line[1]) * 1024;
}

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
      // Warm: the first request loads the routes' code and the store's driver.
      const before = residentOf(child.pid as number);
      let peak = before;
      const sampler = setInterval(() => peak = Math.max(peak, residentOf(child.pid as number)), 50);
      let answer: string;
      try {
        answer = await upload(url);
      } finally {
        clearInterval(sampler);
      }
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
      child.kill();
    }
  });
});
