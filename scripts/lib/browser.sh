# shellcheck shell=bash
# scripts/lib/browser.sh: what the console's browser journeys (tests/browser/journeys.py, run by
# tests/it/browser.rs) need: Debian's chromium and chromium-driver (/usr/bin/chromium,
# /usr/bin/chromedriver), Python's selenium in the project's .venv/, and npm's axe-core in
# tests/browser/node_modules/ (from tests/browser/package-lock.json). Sourced by scripts/test.sh.
# Like apt.sh and venv.sh, it reports errors with a non-zero status and a message on stderr.
#
# Functions:
#   agentcard_browser  installs what is missing, saying what before each install.

# shellcheck source=scripts/lib/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"

AGENTCARD_BROWSER_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/browser
# The version the journeys were written against.
AGENTCARD_SELENIUM=selenium==4.51.0

agentcard_browser() {
	if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
		agentcard_apt_install chromium chromium-driver || return 1
	fi
	agentcard_venv "$AGENTCARD_SELENIUM" || return 1
	if [[ ! -f $AGENTCARD_BROWSER_TESTS/node_modules/axe-core/axe.min.js ]]; then
		command -v npm >/dev/null 2>&1 || agentcard_apt_install nodejs npm || return 1
		echo "agentcard: installing the npm packages of tests/browser/package-lock.json" \
			"(axe-core, the accessibility checker) into tests/browser/node_modules/ (npm ci)" >&2
		(cd "$AGENTCARD_BROWSER_TESTS" && npm ci --no-audit --no-fund >&2) || return 1
	fi
}
