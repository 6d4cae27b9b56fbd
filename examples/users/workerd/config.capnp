# workerd serving the two bundles of the sample users app (`npm run bundle:worker` writes them
# to dist/workerd/ beside a copy of this file): `workerd serve dist/workerd/config.capnp`.
# No nodejs_compat flag: Thaw needs nothing beyond the fetch API there, but for the caller of a
# request, which security() binds with AsyncLocalStorage: nodejs_als gives that alone (this
# compatibility date loads node:async_hooks without it; older ones need it).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "users", worker = .users),
    (name = "usersExplicit", worker = .usersExplicit),
  ],
  sockets = [
    (name = "users", address = "127.0.0.1:8787", http = (), service = "users"),
    (name = "usersExplicit", address = "127.0.0.1:8788", http = (), service = "usersExplicit"),
  ],
);

const users :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "users.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["nodejs_als"],
);

const usersExplicit :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "users_explicit.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["nodejs_als"],
);
