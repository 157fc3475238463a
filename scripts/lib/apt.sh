# shellcheck shell=bash
# scripts/lib/apt.sh: install the Debian packages a script needs. Sourced by
# scripts/lib/postgres.sh and scripts/lib/bench.sh (sourcing it twice is
# harmless). Like postgres.sh, it reports errors with a non-zero status and a
# message on stderr, so it behaves the same under `set -e` or not.
#
# Functions:
#   agentcard_apt_install PKG...  installs PKG... with apt-get, as root or with
#       passwordless sudo (never prompting), noninteractively, after one
#       `apt-get update` per shell, saying what it installs first. When it cannot (no apt-get, neither root
#       nor passwordless sudo) or apt-get fails, it says so and returns 1; the
#       caller adds what else the user may do.

_AGENTCARD_APT_UPDATED=${_AGENTCARD_APT_UPDATED:-}

_agentcard_apt_error() {
	printf 'agentcard: error: %s\n' "$*" >&2
}

agentcard_apt_install() {
	local -a sudo=()
	if (($# == 0)); then
		_agentcard_apt_error "usage: agentcard_apt_install PKG..."
		return 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		_agentcard_apt_error "cannot install $*: there is no apt-get here"
		return 1
	fi
	if [[ $EUID -ne 0 ]]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
			sudo=(sudo -n)
		else
			_agentcard_apt_error "cannot install $*: this user is neither root nor has passwordless sudo;" \
				"install them yourself (e.g. 'sudo apt-get install $*')"
			return 1
		fi
	fi
	echo "agentcard: installing the Debian package(s) $* system-wide (apt-get install)" >&2
	if [[ -z $_AGENTCARD_APT_UPDATED ]]; then
		echo "agentcard: running apt-get update first" >&2
		if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >&2; then
			_agentcard_apt_error "apt-get update failed"
			return 1
		fi
		_AGENTCARD_APT_UPDATED=1
	fi
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" </dev/null >&2; then
		_agentcard_apt_error "apt-get install $* failed"
		return 1
	fi
}
