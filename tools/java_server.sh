# What tools/elasticmq.sh and tools/s3proxy.sh share: one JVM server from Maven Central, run with
# `java -cp` on the classpath that the pom.xml of the current folder (.ci/<name>) resolves (the
# first start downloads it; later ones use Maven's local repository), its log (target/<name>.log)
# and pid (target/pid) in that folder's target/. Sourced, after `cd .ci/<name>`, with `name` (what
# the messages say) and `port` (where the server listens, on 127.0.0.1) set.
mkdir -p target

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

# True, saying so, when a server already answers on the port: a start then leaves it as it is.
java_server_up() {
  if answers; then echo "$name: already up on $port"; return 0; fi
  return 1
}

# Starts `java -cp <classpath> "$@"` (JVM options, main class, its arguments) and returns once the
# port answers; exits 1 with the log's last lines when the server ends first or 60 s pass. In a
# session of its own: a test run that is killed must not take the server down with it.
java_server_start() {
  mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
  : >"target/$name.log"
  setsid nohup java -cp "$(cat target/classpath.txt)" "$@" >>"target/$name.log" 2>&1 &
  echo $! >target/pid
  for _ in $(seq 1 600); do
    if answers; then echo "$name: up on $port"; return 0; fi
    if ! kill -0 "$(cat target/pid)" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "$name: the server did not start on $port; the last lines of its log:" >&2
  tail -n 40 "target/$name.log" >&2 || true
  exit 1
}

# Stops the server this script started (SIGTERM). With `wait`, returns only once it has ended
# (a zombie counts as ended: nothing here may reap it), SIGKILLed after 15 s.
java_server_stop() {
  local pid
  if [ -f target/pid ]; then
    pid=$(cat target/pid)
    kill "$pid" 2>/dev/null || true
    if [ "${1:-}" = wait ]; then
      for _ in $(seq 1 150); do
        if ! running "$pid"; then break; fi
        sleep 0.1
      done
      if running "$pid"; then
        echo "$name: the server did not end within 15 s of SIGTERM; SIGKILL" >&2
        kill -9 "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
          if ! running "$pid"; then break; fi
          sleep 0.1
        done
      fi
    fi
  fi
  rm -f target/pid
}

# True while process $1 runs (a zombie does not).
running() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [ "${state:0:1}" != Z ]
}
