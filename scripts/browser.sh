#!/usr/bin/env bash
# The headless browser the cockpit's tests drive (tests/readers/test_cockpit.py): Debian's chromium
# and its driver, installed with apt-get when they are missing. Where they cannot be installed (not
# Debian, not root, no package mirror) it says so in one line and exits 0: those tests then skip and
# name the reason.
set -uo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  echo "browser: $(chromium --version 2>/dev/null | head -1) and chromedriver are installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "browser: chromium and chromium-driver are missing and this user cannot install them (not root, no sudo): the cockpit's browser tests will skip"
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null; then
  echo "browser: chromium and chromium-driver are missing and there is no apt-get here: install them by hand; the cockpit's browser tests will skip"
  exit 0
fi
if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 && \
   $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1; then
  echo "browser: installed $(chromium --version 2>/dev/null | head -1) and chromium-driver"
else
  echo "browser: apt-get could not install chromium and chromium-driver: the cockpit's browser tests will skip"
fi
exit 0
