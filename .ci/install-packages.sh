#!/usr/bin/env bash
# Installs the Debian packages the tests start (redis-server, nginx, chromium) when they are
# missing: one `apt-get update`, then one `apt-get install -y` of what is absent. Run as root
# (CI machines are); prints what it found and did.
set -euo pipefail
want=()
command -v redis-server >/dev/null 2>&1 || want+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || want+=(nginx)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || want+=(chromium)
if [ ${#want[@]} -eq 0 ]; then
  echo "install-packages: redis-server, nginx and chromium are present"
  exit 0
fi
echo "install-packages: missing ${want[*]}; installing redis-server nginx chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# All three by name (apt-get leaves the ones already present as they are).
apt-get install -y -qq --no-install-recommends redis-server nginx chromium >/dev/null
# The packages' own services are not wanted: tests start their own on loopback, port 0.
for svc in redis-server nginx; do
  if command -v service >/dev/null 2>&1; then service "$svc" stop >/dev/null 2>&1 || true; fi
done
echo "install-packages: done"
