#!/usr/bin/env bash
# The manual is part of the product: every man page renders without
# warnings (all of groff's: an unknown escape such as \1 is dropped
# silently, an undefined register interpolates nothing), writes a
# backslash as \e (\0 is a space), and names today's version in its footer
# (hwc --version's, the .pc files'); every tool built has a page, and every
# function a shipped library exports and a shipped header declares is
# documented in a page.
set -euo pipefail
: "${HWC_BUILD:?}" "${HWC_SRC:?}"
cd "$HWC_SRC"
fail=0
version=$("$HWC_BUILD/bin/hwc" --version)
version=${version#hwc }
for m in docs/*.[1-8]; do
	head -1 "$m" | grep -q '^\.so ' && continue # a redirect, checked installed by *install.sh
	# A page that names hwc's version in its footer names today's.
	th=$(grep -m1 '^\.TH' "$m")
	if [[ $th =~ \"(lib)?hwc\ ([^\"]*)\" ]] && [[ ${BASH_REMATCH[2]} != "$version" ]]; then
		echo "$m: .TH says ${BASH_REMATCH[2]}, hwc --version $version"
		fail=1
	fi
	out=$(MANWIDTH=80 man --warnings=w -l "$m" 2>&1 >/dev/null) || { echo "$m: man fails"; fail=1; }
	[[ -z $out ]] || { echo "$m: warnings:"; echo "$out"; fail=1; }
	# \0 is a digit-wide space, never the NUL a C example means.
	! grep -n '\\[0-9]' "$m" || { echo "$m: write a backslash as \\e"; fail=1; }
done
for t in "$HWC_BUILD"/bin/*; do
	n=$(basename "$t")
	compgen -G "docs/$n.[18]" >/dev/null || { echo "tool $n has no man page in docs/"; fail=1; }
done
for sub in $("$HWC_BUILD/bin/hwc" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }'); do
	[[ -e docs/hwc-$sub.1 ]] || { echo "hwc $sub has no man page docs/hwc-$sub.1"; fail=1; }
done
headers=$(find include compat -name '*.h' -path '*include*' 2>/dev/null)
for lib in "$HWC_BUILD"/lib/*.so; do
	for f in $(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'); do
		grep -qw -- "$f" $headers || continue # not declared by us (e.g. interposed libc calls)
		grep -qw -- "$f" docs/*.[2-7] || { echo "$(basename "$lib"): $f is not documented in docs/"; fail=1; }
	done
done
exit $fail
