#!/usr/bin/env bash
# Builds the explorer's image from nothing on a machine with podman and Debian's packages but no registry:
# the base (deploy/base-image.sh), the CPU torch wheel (the host's pip, into deploy/wheelhouse/), the image.
#   deploy/build-image.sh [TAG] [PORT] [CONTEXT]     # make image: gpt2-explorer:latest, the repository
# PORT empty: the Dockerfile's own default (8501; 7860 in a Space's folder). CONTEXT's Dockerfile is CONTEXT/Dockerfile
# where there is one (a Space's folder, lab/space.py), else CONTEXT/deploy/Dockerfile.
# HUB_MODELS (environment; set, even empty, it overrides the Dockerfile's default: none, or a Space's list): hub
# models the build downloads into the image (python -m lab prefetch); HF_ENDPOINT: the hub the build downloads from.
# An HF_ENDPOINT on this machine's loopback (a stand-in hub, tests/test_container_hub.py) builds on the host's network.
#   HUB_MODELS="gpt2 distilgpt2" deploy/build-image.sh      # make image HUB_MODELS="gpt2 distilgpt2"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/podman/env.sh"
tag="${1:-gpt2-explorer:latest}"; port="${2:-}"; context="${3:-$here/..}"
dockerfile="$context/Dockerfile"; [ -f "$dockerfile" ] || dockerfile="$context/deploy/Dockerfile"
port_arg=(); [ -n "$port" ] && port_arg=(--build-arg "PORT=$port")
hub_arg=(); [ -n "${HUB_MODELS+set}" ] && hub_arg=(--build-arg "HUB_MODELS=$HUB_MODELS")
[ -n "${HF_ENDPOINT:-}" ] && hub_arg+=(--build-arg "HF_ENDPOINT=$HF_ENDPOINT")
case "${HF_ENDPOINT:-}" in
  http://127.*|http://localhost*|http://\[::1\]*) hub_arg+=(--network host) ;;
esac
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
podman build --quiet --format docker "${secret[@]}" "${port_arg[@]}" "${hub_arg[@]}" \
  --build-arg TORCH_INDEX_URL="${TORCH_INDEX_URL:-}" -f "$dockerfile" -t "$tag" "$context" >/dev/null
size=$(podman image inspect "$tag" --format '{{.Size}}')
served=$(podman image inspect "$tag" --format '{{range .Config.Env}}{{println .}}{{end}}' | sed -n 's/^PORT=//p')
baked=$(podman image inspect "$tag" --format '{{range .Config.Env}}{{println .}}{{end}}' | sed -n 's/^LAB_HUB_MODELS=//p')
echo "image $tag (port $served): built in $(( $(date +%s) - start )) s, $(( size / 1000000 )) MB${baked:+, hub models: $baked}"
