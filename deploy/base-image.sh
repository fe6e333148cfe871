#!/usr/bin/env bash
# Makes the Dockerfile's base image on a machine that reaches Debian's packages but no container registry:
# a minimal Debian bookworm (debootstrap) with Python 3.11 and pip, imported into podman and tagged with the
# name deploy/Dockerfile's FROM names (python:3.11-slim-bookworm), unless an image of that name is already there.
# Where a registry is reachable, none of this is needed: podman pulls the real python:3.11-slim-bookworm.
#   deploy/base-image.sh [NAME]            # about 2 minutes, ~300 MB
set -euo pipefail
name="${1:-python:3.11-slim-bookworm}"
if podman image exists "$name"; then echo "base image $name: already here"; exit 0; fi
command -v debootstrap >/dev/null || { echo "deploy/base-image.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
mirror="$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
mirror="${mirror:-$(sed -n 's/^deb \(http[^ ]*\) bookworm main.*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)}"
mirror="${mirror:-http://deb.debian.org/debian}"
root="$(mktemp -d /var/tmp/base-image.XXXXXX)"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-pip,python-is-python3,ca-certificates \
  bookworm "$root" "$mirror" >/dev/null
# Debian marks its Python "externally managed"; the official image's pip installs system-wide, so does this one.
rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | podman import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' - "$name" >/dev/null
echo "base image $name: made from Debian bookworm ($mirror)"
