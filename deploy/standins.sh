#!/usr/bin/env bash
# Makes haproxy:2.6 and redis:7 from Debian's packages on the local base (deploy/base-image.sh), unless images of
# those names are already here. Where a registry is reachable, podman pulls the official ones instead. The class
# pod (python -m lab.pod) gives each its command, so the stand-ins and the official images run alike.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/podman/env.sh"
"$here/base-image.sh" >/dev/null
for pair in haproxy:2.6=haproxy redis:7=redis-server; do
  name="${pair%%=*}"; package="${pair#*=}"
  podman image exists "$name" && continue
  podman build --quiet --format docker --build-arg PACKAGE="$package" -t "$name" "$here/standins" >/dev/null
  echo "stand-in $name: Debian's $package"
done
