#!/usr/bin/env bash
# Installs the Debian packages InfiniRT builds and tests with (graphviz: its dot parses the
# graphs infinirtGraphDebugDotPrint writes), unless they are already there; packages
# named as arguments too (scripts/fuzz.sh adds clang's).
set -euo pipefail

packages=(cmake g++ make pkg-config libspdlog-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libbenchmark-dev libopenblas-dev libdnnl-dev libgloo-dev graphviz "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: need root (or sudo) to apt-get install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
