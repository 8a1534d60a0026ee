#!/usr/bin/env bash
# Installs Debian's Chromium for the end-to-end tests, if it is not already there. playwright-core drives
# it (executablePath /usr/bin/chromium); no browser is downloaded by npm. `npm test` runs it through
# scripts/preflight.ts when Chromium is missing and this is root.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "install-chromium: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi
echo "install-chromium: apt-get install chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
