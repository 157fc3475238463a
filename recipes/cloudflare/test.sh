#!/usr/bin/env bash
# recipes/cloudflare/test.sh: runs the shared edge cases (recipes/cases/) through worker.js served
# by the real Workers runtime, workerd (the binaries of the npm package `workerd`:
# @cloudflare/workerd-linux-64 / -linux-arm64, exact version in package.json and package-lock.json).
# Installs Node.js (Debian packages) when absent and the npm packages when node_modules is.
# Extra arguments go to `node --test` (e.g. --test-name-pattern=…). Exit 0 = every case passed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	# shellcheck source=scripts/lib/apt.sh
	source ../../scripts/lib/apt.sh
	agentcard_apt_install nodejs npm
fi
if [[ ! -d node_modules ]]; then
	echo "recipes/cloudflare: npm ci" >&2
	npm ci --no-audit --no-fund >&2
fi
exec node --test --test-reporter=spec "$@" test.mjs
