import type { SettingKey } from "./thaw_settings.ts";

/**
 * What each key Thaw reads does, one sentence of Markdown each, for the reference table of the
 * docs (tools/config_keys.ts). Typed by the keys: a key declared without a line here, or a line
 * for a key no longer declared, does not compile.
 */
export const KEY_DOCS: Readonly<Record<SettingKey, string>> = {
  "server.sse.heartbeat":
    "The longest silence of an `@SseMapping` stream before a comment line: `15s` when unset, a duration (`500ms`, `PT15S`; a number is ms), `0`: none.",
  "server.websocket.max-message-size":
    "The largest message a `@WebSocketMapping` socket takes, in bytes: `1048576` (1 MiB) when unset; a larger one closes it with 1009.",
  "server.websocket.allowed-origins":
    "Origins (`https://app.example.com`, `*`: any) whose pages may open a `@WebSocketMapping` socket beside the app's own host: none when unset; a text is split on `,`.",
  "server.websocket.max-buffered":
    "The most a `@WebSocketMapping` socket may hold waiting to be sent, in bytes: `16777216` (16 MiB) when unset; past it (a client that does not read) the socket is closed with 1008, logged.",
  "server.port": "The port `listen(app)` serves on (`0`: any free port).",
  "server.hostname": "The address `listen(app)` binds.",
  "server.max-body-size": "The largest request body, in bytes; a larger one is answered 413.",
  "server.multipart.max-file-size":
    "The largest part of a `multipart/form-data` body (a file or a field), in bytes; a larger one is answered 413.",
  "server.multipart.max-request-size":
    "The largest `multipart/form-data` body, in bytes (`server.max-body-size` does not apply to it); a larger one is answered 413.",
  "server.multipart.max-parts":
    "The most parts of a `multipart/form-data` body; one more is answered 413.",
  "server.multipart.file-size-threshold":
    "File parts larger than this, in bytes, of a body read as it arrives go to a temporary file; smaller ones stay in memory.",
  "server.multipart.location":
    "The folder of uploads' temporary files (the OS's temporary folder when unset).",
  "server.allow-encoded-slash":
    "`true`: a `%2F` in a path reaches path variables as `/`; else such a path is a 400.",
  "server.shutdown-timeout":
    "Seconds that requests in flight, then each `@PreDestroy` hook, get on shutdown.",
  "server.shutdown-delay":
    "Seconds `listen(app)` keeps serving, readiness DOWN, after a shutdown starts and before it stops accepting.",
  "server.request-timeout":
    "Milliseconds a request may take until its answer's head; then it is answered 503 (`0`: no limit).",
  "server.header-timeout":
    "Milliseconds a client has to send a request's head, on a new or a kept-alive connection; then it is closed (Node answers 408 first). Bun keeps its own 10 s.",
  "server.forward-headers-strategy":
    "Which address is the client's in spans and the access log: `none`, the socket's peer; `framework`, the right-most `Forwarded` `for=`, else `X-Forwarded-For` entry (set by the proxy in front); `native`, the socket's, or on workerd Cloudflare's `CF-Connecting-IP`.",
  "app.component-scan":
    "Folders, relative to the file, that `scanComponents(config)` scans for bean classes.",
  "app.openapi":
    "`true`, `false`, or the keys below: what `openApi()` serves (it needs `openApi()`).",
  "app.openapi.enabled":
    "`false` serves neither the document nor the page, whatever the code says.",
  "app.openapi.path": "Where the OpenAPI document is served (`/openapi.json`); `false`: nowhere.",
  "app.openapi.docs": "Where the docs page is served (`/docs`); `false`: nowhere.",
  "app.openapi.title": "The document's `info.title`.",
  "app.openapi.version": "The document's `info.version` (quote it).",
  "app.openapi.description": "The document's `info.description`.",
  "thaw.profiles.active":
    "The profiles whose `application-{profile}.yml` is read over this file, in order.",
  "thaw.scheduling.enabled":
    "`false`: no `@Scheduled` job runs (for tests, or a replica that must not run them).",
  "thaw.task.execution.pool.max-size":
    "The most `@Async` runs of the default executor at once (`tasks()` of `@thaw/thaw/tasks`).",
  "thaw.task.execution.pool.queue-capacity":
    "The most `@Async` runs of the default executor waiting for a slot; one more rejects with `TaskRejectedError`.",
  "thaw.task.execution.shutdown.await-termination-period":
    "How long `close()` lets the executors' running and queued runs finish before it drops the rest: `30s` when unset, a duration (`500ms`, `PT30S`; a number is ms).",
  "thaw.task.executors":
    "Named executors for `@Async(name)`, each with the keys of `thaw.task.execution.pool` (`thaw.task.executors.mail.pool.max-size`).",
  "jobs.store":
    "Where the jobs of `jobs()` (`@thaw/thaw/jobs`) are kept: `datasource`, a table of a datasource, made by `jobsMigration()`; `sqs`, SQS queues (through `@aws-sdk/client-sqs`); `cloudflare`, Cloudflare Queues, sent through the worker's producer bindings and run by its `queue` export.",
  "jobs.datasource": "The datasource whose table keeps the jobs: the primary one when unset.",
  "jobs.retention":
    "How long a done job is kept before it is deleted: `7d` by default; `0` deletes it as it finishes. Dead jobs are kept until deleted.",
  "jobs.poll-interval":
    "How often a worker looks for due jobs nobody woke it for (another process's enqueue, a delay coming due, a lease running out): `1s` by default.",
  "jobs.sqs.endpoint":
    "The SQS service's URL when it is not AWS's own (ElasticMQ, LocalStack), for `jobs.store: sqs`.",
  "jobs.sqs.region":
    "The AWS region of the jobs' SQS queues: the SDK's own (`AWS_REGION`, the profile) when unset.",
  "jobs.sqs.access-key-id":
    "The access key id for the jobs' SQS queues, with `jobs.sqs.secret-access-key`: the SDK's default credentials when unset.",
  "jobs.sqs.secret-access-key":
    "The secret access key for the jobs' SQS queues; masked in every message.",
  "jobs.sqs.wait-time":
    "How long a receive from SQS waits for a job to come (long polling): `20s` by default, the most SQS allows.",
  "jobs.cloudflare.bindings":
    "For `jobs.store: cloudflare`: the producer binding of each queue, by queue name (`mail: MAIL_QUEUE`); a queue not listed is sent through the binding named as the queue.",
  "kafka.bootstrap-servers":
    "The brokers the Kafka client first reaches, `host:port` each (`kafka()` of `@thaw/thaw/kafka`); a text is split on `,`.",
  "kafka.client-id": "The client id the brokers see in their logs and quotas: `thaw` when unset.",
  "kafka.consumer.group-id": "The consumer group of every `@KafkaListener` that names none.",
  "kafka.consumer.auto-offset-reset":
    "Where a group with no committed offset starts: the partition's `earliest` record, the `latest` (only what comes next), or `none` (the listener fails).",
  "kafka.producer.acks":
    "What the broker waits for before acknowledging a send: `all` (every in-sync replica, with the idempotent producer), `1` (the leader) or `0` (nothing).",
  "kafka.producer.retries":
    "How many times the client tries a failed send in each round (a leader moving, a broker restarting), waiting 100 ms, then twice as long each time up to 1 s; rounds go on until `kafka.producer.delivery-timeout`.",
  "kafka.producer.delivery-timeout":
    "How long a send may wait for the broker's acknowledgement, tries included, before it rejects with a `TimeoutError` (Java's `delivery.timeout.ms`): `120s` when unset, a duration (`30s`, `PT30S`; a number is ms).",
  "kafka.listener.concurrency":
    "The consumers each `@KafkaListener` runs that names no `concurrency`: at most one per partition does work.",
  "kafka.security.protocol":
    "How the client reaches the brokers: `PLAINTEXT`, `SSL` (TLS), `SASL_PLAINTEXT` or `SASL_SSL`.",
  "kafka.sasl.mechanism": "The SASL mechanism: `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`.",
  "kafka.sasl.username": "The SASL user name.",
  "kafka.sasl.password": "The SASL password (masked wherever Thaw shows the configuration).",
  "kafka.ssl.trust-store-certificates":
    "The PEM certificates the brokers' certificates are checked against: the runtime's own when unset.",
  "kafka.ssl.key-store-certificate-chain":
    "The client's PEM certificate chain, for brokers that ask for one (mutual TLS).",
  "kafka.ssl.key-store-key": "The client's PEM private key (masked).",
  "kafka.outbox.enabled":
    "`false`: a `KafkaTemplate.send` inside a transaction goes to the broker at once, as outside one, rather than to the datasource's outbox table.",
  "kafka.outbox.table":
    "The outbox table of each datasource (its lock table is this name and `_lock`).",
  "kafka.outbox.batch-size": "The outbox rows the relay reads and sends at a time.",
  "kafka.outbox.poll-interval":
    "How often the relay looks for outbox rows no commit of its process woke it for: `1s` when unset, a duration (`500ms`, `PT1S`; a number is ms).",
  "kafka.outbox.lease":
    "How long a relay holds the outbox's lock unless it gives it back (a relay that died blocks the others this long): `30s` when unset.",
  "kafka.outbox.send-timeout":
    "How long the relay waits for the broker's answer to a send before it counts as failed and is tried again: `10s` when unset.",
  "kafka.outbox.retention":
    "How long sent outbox rows are kept (`0`: deleted as they are sent): `1h` when unset.",
  "security.permit-all":
    "Routes any caller may reach with `security()` on, as their paths are written (`/public/**` for every route under `/public`).",
  "security.oauth2.resourceserver.jwt.issuer-uri":
    "The token issuer: its `/.well-known/openid-configuration` names the key set, and every token's `iss` must be this.",
  "security.oauth2.resourceserver.jwt.jwk-set-uri":
    "The issuer's key set (JWKS), fetched directly: without `issuer-uri`, a token's `iss` is not checked.",
  "security.oauth2.resourceserver.jwt.public-key-location":
    "A file holding the issuer's public key (PEM, `-----BEGIN PUBLIC KEY-----`), instead of a key set.",
  "security.oauth2.resourceserver.jwt.public-key":
    "The issuer's public key itself (PEM), instead of a key set or a file.",
  "security.oauth2.resourceserver.jwt.audiences":
    "Audiences of which a token's `aud` must hold one; none: `aud` is not checked.",
  "security.oauth2.resourceserver.jwt.jws-algorithms":
    "The signature algorithms a token may use, all asymmetric (`none` and `HS256`... are refused).",
  "security.oauth2.resourceserver.jwt.principal-claim-name":
    "The claim whose value is the caller's name.",
  "security.oauth2.resourceserver.jwt.authorities-claim-name":
    "The claim holding the caller's authorities: `scope`, else `scp`, when unset.",
  "security.oauth2.resourceserver.jwt.authority-prefix":
    "What each authority of that claim is prefixed with (`SCOPE_read`).",
  "security.oauth2.resourceserver.jwt.roles-claim-name":
    "A claim holding roles, each an authority prefixed `ROLE_` (a dotted path reaches into objects: `realm_access.roles`).",
  "security.oauth2.resourceserver.jwt.issuers":
    "Many trusted issuers instead of one: each `{ issuer-uri }` or `{ issuer, jwk-set-uri }`, with `audiences` of its own; a token's `iss` picks one, and one not listed is refused before any fetch.",
  "security.oauth2.resourceserver.opaquetoken.introspection-uri":
    "The introspection endpoint (RFC 7662) that checks opaque bearer tokens, instead of JWT keys.",
  "security.oauth2.resourceserver.opaquetoken.client-id":
    "The resource server's client id at the introspection endpoint (HTTP Basic).",
  "security.oauth2.resourceserver.opaquetoken.client-secret":
    "The resource server's client secret at the introspection endpoint (HTTP Basic).",
  "security.oauth2.resourceserver.opaquetoken.cache-ttl":
    "How long an active token's introspection is kept (never past its `exp`): `60s` when unset, `0` keeps none.",
  "security.oauth2.client.registration":
    "Each service the app calls with a token of its own (client credentials), by name: `client-id`, `client-secret`, `scope`, and `token-uri` or a `provider`; each is a `TokenClient` bean of that name.",
  "security.oauth2.client.provider":
    "Authorization servers by name, for the registrations: `token-uri`, or `issuer-uri` whose discovery document names it.",
  "security.oauth2.resourceserver.jwt.clock-skew":
    "How far a token's `exp` and `nbf` may be off the server's clock: `60s` when unset, a duration (`500ms`, `PT1M`; a number is ms).",
  "thaw.broadcast.transport":
    "What carries `Broadcaster.publish` to every replica (the `Broadcaster` of `@thaw/thaw/broadcast`): `memory` (this process alone), `redis` (pub/sub) or `kafka` (a topic).",
  "thaw.broadcast.max-buffered":
    "The most bytes of messages that may wait for one subscriber of a channel; past it the subscriber is dropped, with a log line.",
  "thaw.broadcast.redis.url":
    "The Redis the `redis` transport publishes and subscribes on, `redis[s]://[[user][:password]@]host[:port][/db]`.",
  "thaw.broadcast.redis.channel":
    "The one Redis channel the `redis` transport's messages go on, every broadcast channel's.",
  "thaw.broadcast.kafka.bootstrap-servers":
    "The Kafka brokers of the `kafka` transport (`host:port`, a list or a comma-separated text): those of `kafka.bootstrap-servers` when unset, else `127.0.0.1:9092`.",
  "thaw.broadcast.kafka.topic":
    "The topic the `kafka` transport's records go to, keyed by channel; each replica reads it from its end, in a group of its own.",
  "thaw.broadcast.kafka.client-id":
    "The client id of the `kafka` transport's producer and consumer, and the start of its consumer groups' ids.",
  "security.basic.realm":
    "The realm HTTP Basic's challenge names (`WWW-Authenticate: Basic realm=...`).",
  "security.basic.iterations":
    "The PBKDF2 iterations of the users' password hashes, which an unknown user's check costs alike: `600000` (OWASP's); `100000` on Cloudflare's hosted Workers, which refuse more.",
  "security.api-keys.header-name": "The request header an API key is read from.",
  "security.api-keys.keys":
    "Each API key by name: `key` (the secret, at least 16 printable ASCII characters) and `authorities`; the name is the caller's name.",
  "thaw.cache":
    "Each cache, by name: `ttl` its entries live (`5m`), `max-entries` (10,000) and `max-bytes` (64 MiB) the in-memory cache keeps, `timeout` a store call (`2s`).",
  "management.endpoints.web.exposure.include":
    "The actuator's endpoints served (`caches`, `configprops`, `env`, `health`, `info`, `loggers`, `mappings`, `migrations`, `prometheus`, `scheduledtasks`; `*`: all).",
  "management.endpoints.web.exposure.exclude":
    "Endpoints not served, though `include` names them (or says `*`).",
  "management.endpoints.web.base-path": "Where the actuator's endpoints are served.",
  "management.endpoints.web.discovery.enabled":
    "`false`: no index of the endpoints at the base path, which is then free for a route.",
  "management.server.port":
    "A port of its own for the actuator: `listen(app)` serves its endpoints there, and not on `server.port`.",
  "management.server.address":
    "The address the management port binds (`server.hostname` by default; `127.0.0.1` keeps it local).",
  "management.health.timeout": "Milliseconds a health check may take before its component is DOWN.",
  "management.health.diskspace.enabled":
    "`false`: no `diskSpace` health component (the free space of `path`; absent on workerd).",
  "management.health.diskspace.threshold":
    "Bytes of free space under which `diskSpace` is DOWN (10 MB).",
  "management.health.diskspace.path":
    "The folder whose file system `diskSpace` watches (the working folder when unset).",
  "management.health.redis.enabled":
    "`false`: no `redis` health component for a `RedisCacheManager` bean.",
  "management.health.db.enabled":
    "`false`: no `db` health component, neither the datasources' of `data()` nor a `SqlLockProvider`'s.",
  "management.health.search.enabled":
    "`false`: no `search` health component for the search connections of `search()`.",
  "management.endpoint.health.show-details":
    "`always`: the health answer lists each component and its details.",
  "management.endpoint.env.show-values":
    "`always`: `env` shows values, but never a secret key's, a `${file:}` value or a URL's credentials; `never`: every value is `******`; `when-authorized` stops `bootstrap` (Thaw has no roles).",
  "management.endpoint.configprops.show-values":
    "`always`: `configprops` shows values, masked as `env`'s; `never`: every value is `******`; `when-authorized` stops `bootstrap`.",
  "logging.level":
    "Each logger's level by name, `TRACE` to `OFF` (`root`: `INFO` unless set; a dotted name's loggers below it take it); needs `logging()`.",
  "logging.structured": "The keys of structured lines, below; needs `logging()`.",
  "logging.structured.format.console":
    "Each line one JSON object of Elastic's (`ecs`) or Logstash's (`logstash`) shape; plain lines when unset.",
  "logging.access.enabled":
    "`true`: an entry per request (method, route, path, status, duration, bytes, trace id, client address, user agent) to the logger `thaw.access`, one JSON line when lines are plain; needs `logging()`.",
};
