#!/usr/bin/env bash
# Installs the Debian packages the integration tests need when they are missing: nginx and
# openssl (TLS and basic-auth proxy; the Kafka test broker's certificates), tinyproxy (forward
# proxy), PostgreSQL and MariaDB (the SQL runner), Java 17 and Maven (the OpenSearch node from
# Maven Central), Chromium (the docs page's browser test and tools/docs_screenshot.ts, through
# puppeteer-core), Prometheus and promtool (the actuator's exposition, checked and scraped), Redis
# (the shared cache). Run by `npm test` before it starts the servers. As root with apt-get it
# installs them; otherwise it prints the exact command.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
have nginx || missing+=(nginx-light)
have tinyproxy || missing+=(tinyproxy)
have openssl || missing+=(openssl)
have mariadbd || missing+=(mariadb-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
have java || missing+=(openjdk-17-jre-headless)
have mvn || missing+=(maven)
have chromium || missing+=(chromium)
have promtool || missing+=(prometheus)
have redis-server || missing+=(redis-server)
[ ${#missing[@]} -eq 0 ] && exit 0

command="apt-get update && apt-get install -y ${missing[*]}"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "system_packages: the integration tests need ${missing[*]}; install them as root:" >&2
  echo "  $command" >&2
  exit 1
fi
echo "system_packages: installing ${missing[*]} (Debian)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
