#!/usr/bin/env bash
# Builds the explorer's image from nothing on a machine with podman and Debian's packages but no registry:
# the base (deploy/base-image.sh), the CPU torch wheel (the host's pip, into deploy/wheelhouse/), the image.
#   deploy/build-image.sh [TAG] [PORT] [CONTEXT]     # make image: gpt2-explorer:latest, 8501, the repository
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/podman/env.sh"
tag="${1:-gpt2-explorer:latest}"; port="${2:-8501}"; context="${3:-$here/..}"
start=$(date +%s)
"$here/base-image.sh"
wheels="$context/deploy/wheelhouse"
mkdir -p "$wheels"
if ! ls "$wheels"/torch-*.whl >/dev/null 2>&1; then
  # The host's pip resolves torch==2.13.0 to the CPU build where it is configured to (a wheel on disk, or an
  # extra index); where it would fetch the CUDA build, pass TORCH_INDEX_URL instead and leave this empty.
  if [ -z "${TORCH_INDEX_URL:-}" ]; then
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux_2_28_x86_64 -d "$wheels" torch==2.13.0
    case "$(ls "$wheels"/torch-*.whl)" in
      *+cpu*) ;;
      *) echo "the host's pip gave a torch wheel that is not the CPU build; set TORCH_INDEX_URL" >&2
         rm -f "$wheels"/torch-*.whl; exit 2 ;;
    esac
  fi
fi
secret=()
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
  [ -s "$ca" ] && { secret=(--secret "id=ca_bundle,src=$ca"); break; }
done
podman build --quiet --format docker "${secret[@]}" --build-arg PORT="$port" \
  --build-arg TORCH_INDEX_URL="${TORCH_INDEX_URL:-}" -f "$context/deploy/Dockerfile" -t "$tag" "$context" >/dev/null
size=$(podman image inspect "$tag" --format '{{.Size}}')
echo "image $tag (port $port): built in $(( $(date +%s) - start )) s, $(( size / 1000000 )) MB"
