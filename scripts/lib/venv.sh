# shellcheck shell=bash
# scripts/lib/venv.sh: the project's Python environment, .venv/ at the repository's root
# (ignored by git), holding the packages from PyPI that the tests run; nothing goes into the
# system's or the user's Python. Sourced by scripts/test.sh. Like apt.sh, it reports errors
# with a non-zero status and a message on stderr.
#
# Functions:
#   agentcard_venv REQUIREMENT...  makes .venv/ when it is missing (with Debian's python3-venv,
#       installed by apt.sh, when Python cannot make one), installs with its pip each
#       REQUIREMENT (`name==version`) it lacks, saying which before installing, and puts
#       .venv/bin first on PATH. The Rust tests look there too (tests/it/harness.rs), so that
#       `cargo test` alone finds what this installed.

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

# A script may name another environment first (scan-console.sh: one whose pins clash with .venv/).
AGENTCARD_VENV=${AGENTCARD_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venv}

_agentcard_venv_error() {
	printf 'agentcard: error: %s\n' "$*" >&2
}

# The requirements among $@ that .venv/ lacks (absent, or another version).
_agentcard_venv_missing() {
	"$AGENTCARD_VENV/bin/python" - "$@" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version

for requirement in sys.argv[1:]:
    name, _, wanted = requirement.partition("==")
    try:
        if wanted and version(name) != wanted:
            print(requirement)
    except PackageNotFoundError:
        print(requirement)
PY
}

_agentcard_venv_create() {
	echo "agentcard: making the project's Python environment $AGENTCARD_VENV (python3 -m venv)" >&2
	if python3 -m venv "$AGENTCARD_VENV" >/dev/null 2>&1; then
		return 0
	fi
	# Debian's Python makes one only with its package python3-venv (ensurepip).
	rm -rf "$AGENTCARD_VENV"
	agentcard_apt_install python3-venv || return 1
	python3 -m venv "$AGENTCARD_VENV" >&2 || {
		_agentcard_venv_error "python3 -m venv $AGENTCARD_VENV failed"
		return 1
	}
}

agentcard_venv() {
	local -a missing=()
	command -v python3 >/dev/null 2>&1 || agentcard_apt_install python3 || return 1
	if [[ ! -x $AGENTCARD_VENV/bin/python ]]; then
		_agentcard_venv_create || return 1
	fi
	mapfile -t missing < <(_agentcard_venv_missing "$@")
	if ((${#missing[@]})); then
		echo "agentcard: installing ${missing[*]} from PyPI into $AGENTCARD_VENV (pip)" >&2
		if ! "$AGENTCARD_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
			"${missing[@]}" >&2; then
			_agentcard_venv_error "pip install ${missing[*]} into $AGENTCARD_VENV failed"
			return 1
		fi
	fi
	PATH="$AGENTCARD_VENV/bin:$PATH"
	export PATH
}
