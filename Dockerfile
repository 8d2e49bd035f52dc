# syntax=docker/dockerfile:1
# Blueprint as a GitHub App server (Probot). Build: docker build -t blueprint .
# Run:   docker run --init --env-file .env -p 3000:3000 \
#          --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#          --security-opt systempaths=unconfined blueprint
#
# The agent's build commands run inside bubblewrap, and the App refuses to start when it cannot
# build that sandbox (BLUEPRINT_SANDBOX=none turns it off, with a warning in every build report).
# bubblewrap, run by the unprivileged `node` user, needs from the container:
# - seccomp=unconfined (or a profile allowing unshare/clone of user, mount and PID namespaces):
#   Docker's default profile refuses to create user namespaces;
# - apparmor=unconfined on AppArmor hosts: docker-default forbids the mounts bubblewrap makes;
# - systempaths=unconfined: Docker masks parts of /proc, and the kernel then refuses the fresh
#   /proc the sandbox mounts for its own PID namespace ("Can't mount proc ... Operation not permitted");
# - a host that allows unprivileged user namespaces (user.max_user_namespaces > 0; on Ubuntu 23.10+
#   also kernel.apparmor_restrict_unprivileged_userns=0).
# Kubernetes: securityContext.seccompProfile.type Unconfined, procMount Unmasked,
# appArmorProfile.type Unconfined. Without these the start-up error says which step failed.

# --- build: TypeScript to lib/ (esbuild, scripts/build.mjs) ------------------
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npm run build

# --- runtime: production dependencies, lib/, git -----------------------------
FROM node:24-slim AS runtime
# git clones and pushes the repositories; bubblewrap sandboxes the agent's commands (see above).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
    && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    BLUEPRINT_WORKDIR=/var/lib/blueprint

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/lib ./lib
COPY app.yml ./

# The image's `node` user (uid 1000) owns only the workspace directory.
RUN mkdir -p /var/lib/blueprint && chown node:node /var/lib/blueprint
# Setup mode (no credentials; start with NODE_ENV=development) writes the App's credentials to ./.env, and
# /app is root's: .env is a link into the volume, where they are writable and outlive the container.
RUN ln -s /var/lib/blueprint/.env /app/.env
USER node
VOLUME ["/var/lib/blueprint"]

EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Not `npm start`: that recompiles first, and the runtime image has no TypeScript. lib/start.js is what
# `npm start` runs: `probot run ./lib/index.js` with credentials, Blueprint's setup mode without.
CMD ["node", "--max-semi-space-size=64", "lib/start.js"]
