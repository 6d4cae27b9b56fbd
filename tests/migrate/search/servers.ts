import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../free_port.ts";
import { type TempDir, tempDir } from "../../temp_dir.ts";

export { freePort };

async function waitForPort(
  port: number,
  process: ChildProcess,
  name: string,
  log: string,
): Promise<void> {
  // A give-up only, paid when the helper never listens: on a loaded machine it may take seconds.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (process.exitCode !== null) break;
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    `${name} did not start (is it installed? npm test installs it): ${await readFile(log, "utf8")
      .catch(() => "")}`,
  );
}

/** A running helper server and how to stop it. */
export interface Helper {
  readonly url: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** Stops `child`, then removes its folder. */
function stopper(child: ChildProcess, dir: TempDir): () => Promise<void> {
  return async () => {
    // Ended by a signal, a child has no exit code, and its `exit` came already.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await dir[Symbol.asyncDispose]();
  };
}

/**
 * nginx from Debian as a TLS reverse proxy with basic auth in front of `upstream`, with a
 * self-signed certificate for 127.0.0.1 made by openssl for this run.
 */
export async function startTlsProxy(
  upstream: string,
  user: string,
  password: string,
): Promise<Helper & { cert: string }> {
  const made = await tempDir("thaw-nginx-");
  const dir = made.path;
  await promisify(execFile)("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-addext",
    "basicConstraints=critical,CA:FALSE",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
  ]);
  await writeFile(join(dir, "htpasswd"), `${user}:{PLAIN}${password}\n`, { mode: 0o644 });
  // nginx's workers run as an unprivileged user: they must be able to read the folder.
  await chmod(dir, 0o755);
  const port = await freePort();
  await writeFile(
    join(dir, "nginx.conf"),
    `
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
    auth_basic "search";
    auth_basic_user_file ${dir}/htpasswd;
    location / { proxy_pass ${upstream}; }
  }
}
`,
  );
  const child = spawn("nginx", [
    "-c",
    join(dir, "nginx.conf"),
    "-p",
    dir,
    "-e",
    join(dir, "error.log"),
  ], { stdio: "ignore" });
  child.on("error", () => {});
  await waitForPort(port, child, "nginx", join(dir, "error.log"));
  return {
    url: `https://127.0.0.1:${port}`,
    dir,
    cert: await readFile(join(dir, "cert.pem"), "utf8"),
    stop: stopper(child, made),
  };
}

/** tinyproxy from Debian as a forward proxy; its log shows which requests went through it. */
export async function startForwardProxy(): Promise<Helper & { log(): Promise<string> }> {
  const made = await tempDir("thaw-tinyproxy-");
  const dir = made.path;
  const port = await freePort();
  const logFile = join(dir, "tinyproxy.log");
  await writeFile(
    join(dir, "tinyproxy.conf"),
    [
      `Port ${port}`,
      "Listen 127.0.0.1",
      "Allow 127.0.0.1",
      "Timeout 30",
      "MaxClients 20",
      `LogFile "${logFile}"`,
      "LogLevel Info",
      "DisableViaHeader Yes",
      "",
    ].join("\n"),
  );
  const child = spawn("tinyproxy", ["-d", "-c", join(dir, "tinyproxy.conf")], { stdio: "ignore" });
  child.on("error", () => {});
  await waitForPort(port, child, "tinyproxy", logFile);
  return {
    url: `http://127.0.0.1:${port}`,
    dir,
    stop: stopper(child, made),
    log: () => readFile(logFile, "utf8"),
  };
}

/** A server that accepts connections and never answers. */
export async function startSilentServer(): Promise<Helper> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    dir: "",
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
