# Sourced by the compat install tests (not run on its own: tests/run runs
# only *.sh).  Installs the tree into a temporary DESTDIR under a fixed
# prefix and sets $dest (the DESTDIR, removed on exit), $prefix, $root
# (where the prefix landed) and fail=0.  run_make uninstall undoes it.
: "${HWC_BUILD:?}" "${HWC_SRC:?}"
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/hwc-test
# Not part of the make that runs the suite: its own, without the jobserver.
run_make() { env -u MAKEFLAGS -u MFLAGS make -s -C "$HWC_SRC" BUILD="$HWC_BUILD" PREFIX="$prefix" \
	DESTDIR="$dest" "$@" >/dev/null; }
run_make install
root=$dest$prefix
fail=0

# expect_installed FILE...: each is there under the prefix.
expect_installed() {
	local f
	for f in "$@"; do
		[[ -e $root/$f ]] || { echo "missing after install: $prefix/$f"; fail=1; }
	done
}

# expect_uninstalled: make uninstall takes it all away again.
expect_uninstalled() {
	run_make uninstall
	local left
	left=$(find "$root" -type f -o -type l)
	[[ -z $left ]] || { echo "left after uninstall:"; echo "$left"; fail=1; }
}
