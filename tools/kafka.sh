#!/usr/bin/env bash
# Starts Apache Kafka brokers in KRaft mode (each node broker and controller) for the integration
# tests. The broker comes from Maven Central (.ci/kafka/pom.xml): the first start downloads ~30 MB.
#   tools/kafka.sh start            one broker on 127.0.0.1:9092, unless this one already answers;
#                                   the same broker also listens secured, for the client's security
#                                   settings: SASL_PLAINTEXT on 9096 (PLAIN, SCRAM-SHA-256 and -512),
#                                   SSL with client certificates on 9097, SASL_SSL on 9098 (SCRAM-SHA-512),
#                                   user "thaw", password "thaw-secret", certificates in target/tls
#   tools/kafka.sh start-cluster    three brokers on 127.0.0.1:9192 to 9194 (the fault tests)
#   tools/kafka.sh kill-node PORT   kill -9 the cluster's broker on PORT (a fault test's crash)
#   tools/kafka.sh restart-node PORT  start that broker again on its data, wait until it answers
#   tools/kafka.sh pause-node PORT  SIGSTOP the cluster's broker on PORT (it holds its connections
#                                   and answers nothing: an outage that loses no state)
#   tools/kafka.sh resume-node PORT  SIGCONT it (also done by restart-node: a killed test run must
#                                   not leave a broker stopped)
#   tools/kafka.sh stop             stop every broker this script started
# A start wipes the broker's data: every test makes topics and groups of its own names.
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/kafka"
mkdir -p target

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits until port $1 refuses (a broker killed): true once it does, false after 30 s.
refuses() {
  for _ in $(seq 1 300); do answers "$1" || return 0; sleep 0.1; done
  return 1
}

# The secured listeners of the single broker: SASL_PLAINTEXT, SSL, SASL_SSL.
secured_ports=(9096 9097 9098)

# Writes node $1's properties: broker port $2, controller port $3, voters $4, replicas $5; with a
# sixth argument "secured", the listeners of secured_ports too.
properties() {
  local id=$1 port=$2 controller=$3 voters=$4 replicas=$5 dir="$PWD/target/node-$2"
  local listeners="PLAINTEXT://127.0.0.1:$port" protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
  if [ "${6:-}" = secured ]; then
    listeners="$listeners,SASL_PLAINTEXT://127.0.0.1:${secured_ports[0]}"
    listeners="$listeners,SSL://127.0.0.1:${secured_ports[1]},SASL_SSL://127.0.0.1:${secured_ports[2]}"
    protocols="$protocols,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL"
  fi
  cat <<PROPS
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=$listeners,CONTROLLER://127.0.0.1:$controller
advertised.listeners=$listeners
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
log.dirs=$dir/data
num.partitions=1
default.replication.factor=$replicas
min.insync.replicas=$((replicas > 1 ? 2 : 1))
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$((replicas > 1 ? 2 : 1))
share.coordinator.state.topic.replication.factor=$replicas
share.coordinator.state.topic.min.isr=$((replicas > 1 ? 2 : 1))
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
PROPS
  [ "${6:-}" = secured ] || return 0
  local tls="$PWD/target/tls" scram="org.apache.kafka.common.security.scram.ScramLoginModule required;"
  cat <<PROPS
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_thaw="thaw-secret";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=$scram
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=$scram
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$scram
listener.name.ssl.ssl.client.auth=required
ssl.keystore.type=PEM
ssl.keystore.location=$tls/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
PROPS
}

# A test CA, the broker's certificate (for 127.0.0.1) and a client's, all signed by it, as PEM in
# target/tls; and another CA that signed nothing, for the tests of a broker that is not trusted.
certificates() {
  local tls="$PWD/target/tls"
  rm -rf "$tls" && mkdir -p "$tls"
  # Each step checked by hand: `set -e` does not hold in a subshell that an `if` tests.
  if ! (
    cd "$tls" || exit 1
    for ca in ca other-ca; do
      openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=Thaw test $ca" \
        -keyout "$ca.key" -out "$ca.pem" || exit 1
    done
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >broker.ext
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    for who in broker client; do
      openssl req -newkey rsa:2048 -nodes -subj "/CN=thaw-$who" -keyout "$who.key" \
        -out "$who.csr" || exit 1
      openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$who.ext" -out "$who.pem" || exit 1
    done
    cat broker.key broker.pem >broker-keystore.pem
  ) >"$PWD/target/openssl.log" 2>&1; then
    echo "kafka: making the test certificates failed (openssl is in tools/system_packages.sh):" >&2
    tail -n 20 "$PWD/target/openssl.log" >&2
    exit 1
  fi
}

# Waits until the broker on port $1 (its folder target/node-$1) says it started and answers.
wait_up() {
  local port=$1 dir="$PWD/target/node-$1"
  for _ in $(seq 1 300); do
    if grep -q "Kafka Server started" "$dir/kafka.log" 2>/dev/null && answers "$port"; then return 0; fi
    if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then break; fi
    sleep 1
  done
  echo "kafka: the broker on $port did not start; the last lines of its log:" >&2
  tail -n 40 "$dir/format.log" "$dir/kafka.log" >&2 || true
  exit 1
}

java_opts=(-Xms256m -Xmx512m -XX:+UseSerialGC -Dlog4j2.configurationFile="$PWD/log4j2.xml")

# Starts the broker whose folder is target/node-$1, on the data it has. In a session of its own: a
# test that restarts a broker must not take it down when the test run is killed (a step's time-out
# signals its whole process group), leaving the next run a cluster short of its quorum.
launch() {
  local dir="$PWD/target/node-$1"
  : >"$dir/kafka.log"
  setsid nohup java "${java_opts[@]}" -cp "$(cat target/classpath.txt)" kafka.Kafka "$dir/server.properties" \
    >>"$dir/kafka.log" 2>&1 9>&- &
  echo $! >"$dir/pid"
}

# Starts the nodes on the given broker ports (controllers on port + 3), waits until each answers.
start_nodes() {
  local replicas=$# voters="" id=0 port secured=""
  for port in "$@"; do id=$((id + 1)); voters="$voters${voters:+,}$id@127.0.0.1:$((port + 3))"; done
  [ "$replicas" = 1 ] && secured=secured
  exec 9>target/start.lock
  flock 9
  local all_up=1
  for port in "$@"; do answers "$port" || all_up=0; done
  # A broker started before it listened secured (or whose certificates are gone) starts again.
  if [ -n "$secured" ]; then
    for port in "${secured_ports[@]}"; do answers "$port" || all_up=0; done
    [ -f target/tls/ca.pem ] || all_up=0
  fi
  if [ "$all_up" = 1 ]; then echo "kafka: already up on $*"; return 0; fi
  # This script's brokers still running are stopped first; a port that another process holds
  # stops the start, named.
  for port in "$@"; do
    local pidfile="target/node-$port/pid"
    if [ -f "$pidfile" ]; then kill -9 "$(cat "$pidfile")" 2>/dev/null || true; fi
    if ! refuses "$port"; then
      echo "kafka: something other than this script's broker answers on $port; stop it first" >&2
      exit 1
    fi
  done
  mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
  local cp cluster
  cp="$(cat target/classpath.txt)"
  cluster=$(java "${java_opts[@]}" -cp "$cp" kafka.tools.StorageTool random-uuid)
  [ -z "$secured" ] || certificates
  id=0
  for port in "$@"; do
    id=$((id + 1))
    local dir="$PWD/target/node-$port"
    rm -rf "$dir" && mkdir -p "$dir"
    properties "$id" "$port" $((port + 3)) "$voters" "$replicas" $secured >"$dir/server.properties"
    # SCRAM's credentials live in the cluster's metadata: written as the storage is formatted.
    local scram=()
    [ -z "$secured" ] || scram=(-S 'SCRAM-SHA-256=[name=thaw,password=thaw-secret]'
      -S 'SCRAM-SHA-512=[name=thaw,password=thaw-secret]')
    java "${java_opts[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$cluster" \
      -c "$dir/server.properties" ${scram[@]+"${scram[@]}"} >"$dir/format.log" 2>&1
    launch "$port"
  done
  for port in "$@"; do wait_up "$port"; done
  echo "kafka: up on $*"
}

case "${1:-start}" in
start) start_nodes 9092 ;;
start-cluster) start_nodes 9192 9193 9194 ;;
kill-node)
  [ -f "target/node-${2:?a broker port}/pid" ] || { echo "kafka: no broker of this script on $2" >&2; exit 1; }
  kill -9 "$(cat "target/node-$2/pid")" 2>/dev/null || true
  # Gone once its port refuses: a restart right after must not find it still answering.
  refuses "$2" && exit 0
  echo "kafka: the broker on $2 still answers after kill -9" >&2
  exit 1
  ;;
pause-node | resume-node)
  [ -f "target/node-${2:?a broker port}/pid" ] || { echo "kafka: no broker of this script on $2" >&2; exit 1; }
  signal=STOP
  [ "$1" = pause-node ] || signal=CONT
  kill "-$signal" "$(cat "target/node-$2/pid")"
  ;;
restart-node)
  [ -f "target/node-${2:?a broker port}/server.properties" ] || { echo "kafka: no broker of this script on $2" >&2; exit 1; }
  # A stopped broker still takes connections: it is woken first, or it would count as up.
  [ -f "target/node-$2/pid" ] && kill -CONT "$(cat "target/node-$2/pid")" 2>/dev/null || true
  exec 9>target/start.lock
  flock 9
  if answers "$2"; then echo "kafka: $2 already up"; exit 0; fi
  launch "$2"
  wait_up "$2"
  echo "kafka: $2 up again"
  ;;
stop)
  for pidfile in target/node-*/pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
  ;;
*) echo "usage: tools/kafka.sh [start|start-cluster|kill-node|restart-node|pause-node|resume-node|stop]" >&2; exit 2 ;;
esac
