#!/usr/bin/env bash
# The images `npm run test:container` runs. No registry can be pulled from on CI's machine, so the base
# images the Dockerfile and docker-compose.yml name (debian, node, postgres, redis, haproxy) are made here from
# Debian's packages: a debootstrap of bookworm, imported once, then one small image per service. Podman's
# own storage keeps them between runs on the same machine; only Drey's image is built every time.
# Prints the variables docker-compose.yml reads, as NAME=value lines.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"

log() { printf '[images] %s\n' "$*" >&2; }

base=localhost/drey-test/debian:bookworm
if ! podman image exists "$base"; then
  log "debootstrap bookworm (about a minute, once per machine)"
  rootfs="$(mktemp -d /var/tmp/drey-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" >&2
  # As Debian's own container images: no package lists, caches, manuals or translations, and none installed
  # later either.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/info/*
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
    'path-include /usr/share/locale/locale.alias' >"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
  printf '%s\n' 'APT::Install-Recommends "false";' 'APT::Install-Suggests "false";' \
    'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
    'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' >"$rootfs/etc/apt/apt.conf.d/slim"
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >&2
  rm -rf "$rootfs"
  trap - EXIT
fi

# Node: the official image's layout, with this machine's Node (Debian's own nodejs is 18); tagged by its
# version so that a new Node makes a new image.
node_image="localhost/drey-test/node:$(node --version)"
if ! podman image exists "$node_image"; then
  log "node image $node_image"
  stage="$(mktemp -d /var/tmp/drey-node.XXXXXX)"
  mkdir -p "$stage/node/bin" "$stage/node/lib/node_modules" "$stage/node/include"
  cp "$(command -v node)" "$stage/node/bin/node"
  # Its headers too, as the official image has them (node-gyp compiles against them).
  cp -a "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node" "$stage/node/include/node"
  cp -a "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$stage/node/lib/node_modules/npm"
  cp "$here/images/node.Containerfile" "$stage/Containerfile"
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$stage/ca.crt"
  podman build --quiet --build-arg "BASE=$base" -t "$node_image" "$stage" >&2
  rm -rf "$stage"
fi

for service in postgres redis haproxy; do
  image="localhost/drey-test/$service:bookworm"
  if ! podman image exists "$image"; then
    log "$service image"
    podman build --quiet --build-arg "BASE=$base" -f "$here/images/$service.Containerfile" -t "$image" \
      "$here/images" >&2
  fi
done

log "drey image (the repository's Dockerfile on the node image)"
# The npm cache is kept in a build cache mount, so a rebuild after a change of code downloads nothing. The
# docker format keeps the Dockerfile's HEALTHCHECK (OCI images have none).
podman build --format docker --build-arg "BASE_IMAGE=$node_image" --build-arg "RUNTIME_IMAGE=$base" -t localhost/drey-test/drey:latest "$root" >&2

echo "NODE_IMAGE=$node_image"
echo "RUNTIME_IMAGE=$base"
echo "POSTGRES_IMAGE=localhost/drey-test/postgres:bookworm"
echo "REDIS_IMAGE=localhost/drey-test/redis:bookworm"
echo "HAPROXY_IMAGE=localhost/drey-test/haproxy:bookworm"
echo "DREY_IMAGE=localhost/drey-test/drey:latest"
