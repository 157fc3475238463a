#!/usr/bin/env bash
# scripts/package-deb.sh: builds agentcard's Debian package and checks what it holds.
#
# 1. Installs the cargo-deb tool when it is missing (`cargo install cargo-deb --locked`, from
#    crates.io, into ~/.cargo/bin; said on stderr first).
# 2. `cargo deb --strip`: the release build, stripped of its debug symbols, packaged as
#    Cargo.toml's [package.metadata.deb] says, into target/debian/agentcard_<ver>-1_<arch>.deb.
# 3. Extracts the package into a temporary root (dpkg-deb -x, and its control files with -e) and
#    checks there: every expected file with its mode, the settings file a conffile, the
#    postinst making the `agentcard` system user, the unit verified by `systemd-analyze verify`
#    (where systemd-analyze exists), and the extracted binary running: `--version` naming
#    Cargo.toml's version, and `migrate --help`.
# Prints the package's path on standard output; exits non-zero when a check fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() {
	echo "package-deb: error: $*" >&2
	exit 1
}

if ! cargo deb --version >/dev/null 2>&1; then
	echo "package-deb: installing the cargo-deb tool from crates.io (cargo install cargo-deb --locked)" >&2
	cargo install cargo-deb --locked
fi
command -v dpkg-deb >/dev/null || fail "dpkg-deb is needed (Debian's dpkg)"

echo "package-deb: cargo deb --locked --strip" >&2
deb=$(cargo deb --locked --strip | tail -n 1)
[[ -f $deb ]] || fail "cargo deb did not name a package file (got '$deb')"

root=$(mktemp -d "${TMPDIR:-/tmp}/agentcard-deb.XXXXXX")
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
dpkg-deb -e "$deb" "$root/DEBIAN"

# Where cargo-deb puts units: lib/ or usr/lib/ (merged /usr), by version.
unit=
for dir in usr/lib lib; do
	[[ -f $root/$dir/systemd/system/agentcard.service ]] && unit=$dir/systemd/system/agentcard.service
done
[[ -n $unit ]] || fail "no agentcard.service in the package"

echo "package-deb: $deb holds:" >&2
dpkg-deb -c "$deb" | awk '{ print "  " $1 " " $6 }' >&2

# path, mode
expected=(
	"usr/bin/agentcard 755"
	"etc/agentcard/agentcard.env 640"
	"$unit 644"
	"usr/share/doc/agentcard/README.md 644"
	"usr/share/doc/agentcard/deploy.md 644"
	"usr/share/doc/agentcard/troubleshooting.md 644"
)
for line in "${expected[@]}"; do
	read -r path mode <<<"$line"
	[[ -f $root/$path ]] || fail "$path is missing from the package"
	actual=$(stat -c '%a' "$root/$path")
	[[ $actual == "$mode" ]] || fail "$path has mode $actual, not $mode"
done
grep -qx /etc/agentcard/agentcard.env "$root/DEBIAN/conffiles" ||
	fail "/etc/agentcard/agentcard.env is not a conffile (an upgrade would overwrite the settings)"
grep -q 'adduser --system .* agentcard' "$root/DEBIAN/postinst" ||
	fail "the postinst does not make the agentcard system user"
grep -q '^ExecStart=/usr/bin/agentcard serve$' "$root/$unit" || fail "the unit does not start /usr/bin/agentcard serve"
grep -q '^EnvironmentFile=/etc/agentcard/agentcard.env$' "$root/$unit" || fail "the unit does not read the settings file"

if command -v systemd-analyze >/dev/null; then
	# The unit as installed, but starting the extracted binary (verify checks that it exists).
	mkdir "$root/verify"
	sed "s#^ExecStart=/usr/bin/agentcard #ExecStart=$root/usr/bin/agentcard #" "$root/$unit" \
		>"$root/verify/agentcard.service"
	if ! out=$(systemd-analyze verify "$root/verify/agentcard.service" 2>&1) || [[ -n $out ]]; then
		printf '%s\n' "$out" >&2
		fail "systemd-analyze verify $unit"
	fi
	echo "package-deb: systemd-analyze verify $unit: clean" >&2
else
	echo "package-deb: no systemd-analyze here: the unit is not verified" >&2
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | awk 'NR == 1')
said=$("$root/usr/bin/agentcard" --version)
[[ $said == "agentcard $version" ]] || fail "the binary's --version says '$said', not 'agentcard $version'"
help=$("$root/usr/bin/agentcard" migrate --help) || fail "the binary's migrate --help failed"
grep -q 'Usage: agentcard migrate' <<<"$help" || fail "migrate --help does not show its usage: $help"
echo "package-deb: the extracted binary runs: $said; migrate --help" >&2

printf '%s\n' "$deb"
