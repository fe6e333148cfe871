# Sourced by deploy/*.sh: podman's settings for a machine without systemd, as root (the project's CI and
# sandboxes), unless the caller set CONTAINERS_CONF. Elsewhere podman keeps its own configuration.
if [ -z "${CONTAINERS_CONF:-}" ] && [ "$(id -u)" = 0 ] && [ ! -d /run/systemd/system ]; then
  export CONTAINERS_CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf"
fi
command -v podman >/dev/null || { echo "podman is not installed (apt-get install podman runc)" >&2; exit 2; }
