#!/usr/bin/env bash
# Installs Debian's `prometheus` package for its `promtool`, which the metrics test runs as
# `promtool check metrics` on a worker's /metrics. Without recommends (no node exporter); the Prometheus
# server the package also holds is left stopped and disabled. `npm test` runs it through
# scripts/preflight.ts when promtool is missing and this is root.
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "install-promtool: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
echo "install-promtool: apt-get install prometheus (for promtool)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package also ships the Prometheus server, which Debian enables and starts on systemd hosts (port
# 9090, every interface): only promtool is wanted, and the package was not there before this script.
if [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
