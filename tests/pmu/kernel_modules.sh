#!/bin/sh
# Samples in a kernel module named as perf names them (busybox sh, in
# scripts/pmu-vm --module sha3_generic --module af_alg --module algif_hash):
# pmu/work hashes through AF_ALG with sha3-256-generic, whose code is the
# module sha3_generic's, under hwc record -e cycles; hwc report and perf
# report of that file must give the same rows for the module's functions,
# in the DSO [sha3_generic] (and hwc script the same functions as perf
# script and /proc/kallsyms, sample by sample), with the .ko where perf
# finds it, then compressed as distributions ship it (.ko.gz, .ko.xz,
# .ko.zst, with the .ko hidden: hwc names the functions from each, perf
# 6.1 from the first two and from /proc/kallsyms for .ko.zst, which it does
# not read), then with a truncated .ko.zst (hwc warns, naming the file, and
# falls back to /proc/kallsyms), then with the .ko hidden (both fall back to
# /proc/kallsyms).
# perf reads a copy of /proc/kallsyms (--kallsyms): given /proc/kallsyms
# as root, it reads the kernel's code from /proc/kcore instead, where
# module functions belong to [kernel.kallsyms]; from symbol files it names
# them in [module], as hwc does.
. "$(dirname "$0")/lib"

[ -e /proc/modules ] || { echo "SKIP: this kernel has no loadable modules"; exit 77; }
dir=/lib/modules/$(uname -r)/kernel/crypto
for m in af_alg algif_hash sha3_generic; do
	[ -f "$dir/$m.ko" ] || { echo "SKIP: no $dir/$m.ko (scripts/pmu-vm --module $m puts it there)"; exit 77; }
	[ -d "/sys/module/$m" ] || insmod "$dir/$m.ko" || fail "insmod $m.ko"
done
"$W" afalg sha3-256-generic 1 || { echo "SKIP: no AF_ALG hash sha3-256-generic"; exit 77; }

# module_rows FILE: "SAMPLES DSO SYMBOL" of a report's [sha3_generic] rows
# (hwc's rows have a period column, perf's with -n do not).
module_rows() {
	awk '/\[sha3_generic\]/ { for (i = 1; i <= NF; i++) if ($i == "[sha3_generic]") break;
		s = $(i - 1); if (i > 3 && $(i - 2) ~ /^[0-9]+$/ && $(i - 3) ~ /%$/) s = $(i - 2)
		print s, $i, $(i + 2) }' "$1" | sort
}

# kallsyms_names FILE: "IP FUNCTION" of hwc script's [sha3_generic] lines
# as /proc/kallsyms names them: the module's last text symbol at or below
# IP, of aliases the last listed, as perf and hwc take it (cleanup_module,
# not sha3_generic_mod_fini) (addresses compared as 16-digit hex strings:
# awk's numbers are doubles)
kallsyms_names() {
	awk 'NR == FNR { if ($4 == "[sha3_generic]" && $2 ~ /^[tT]$/ && $3 !~ /^\$/) { n++; a[n] = $1; s[n] = $3 }; next }
	{ ip = sprintf("%16s", $1); gsub(/ /, "0", ip); best = ""; name = "[unknown]"
	  for (i = 1; i <= n; i++) if (a[i] <= ip && a[i] >= best) { best = a[i]; name = s[i] }
	  print $1, name }' /proc/kallsyms "$1"
}

# compare WHAT PERF_MUST: hwc's rows and lines for the module against perf's
# (which must name the module's functions when PERF_MUST is 1) and against
# /proc/kallsyms
compare() {
	hwc record -e cycles -c 100003 -o "$tmp/m.data" -- "$W" afalg sha3-256-generic 300 \
		2>"$tmp/rec.err" || { fail "$1: hwc record: $(cat "$tmp/rec.err")"; return; }
	hwc report -i "$tmp/m.data" --no-children --sort dso,sym >"$tmp/hwc.rep" 2>"$tmp/hwc.err" ||
		fail "$1: hwc report: $(cat "$tmp/hwc.err")"
	cp /proc/kallsyms "$tmp/kallsyms"
	perf report --kallsyms="$tmp/kallsyms" -i "$tmp/m.data" --stdio -n --no-children --sort dso,sym >"$tmp/perf.rep" 2>"$tmp/err" ||
		fail "$1: perf report: $(cat "$tmp/err")"
	module_rows "$tmp/hwc.rep" >"$tmp/hwc.rows"
	module_rows "$tmp/perf.rep" >"$tmp/perf.rows"
	measured "$1: hwc's [sha3_generic] rows: $(tr '\n' ';' <"$tmp/hwc.rows")"
	grep -q ' keccakf_round$' "$tmp/hwc.rows" || fail "$1: hwc names no keccakf_round in [sha3_generic]"
	# hwc script's lines, each named as /proc/kallsyms names its address
	hwc script -i "$tmp/m.data" -F ip,sym,dso >"$tmp/hwc.scr" 2>"$tmp/err" ||
		fail "$1: hwc script: $(cat "$tmp/err")"
	grep '(\[sha3_generic\])$' "$tmp/hwc.scr" | awk '{ print $1, $2 }' >"$tmp/hwc.lines"
	kallsyms_names "$tmp/hwc.lines" >"$tmp/kallsyms.lines"
	[ -s "$tmp/hwc.lines" ] || fail "$1: hwc script shows no sample in [sha3_generic]"
	cmp -s "$tmp/hwc.lines" "$tmp/kallsyms.lines" ||
		fail "$1: hwc script's names differ from /proc/kallsyms': $(diff "$tmp/hwc.lines" "$tmp/kallsyms.lines" | grep '^[-+][0-9a-f]' | head -5)"
	if [ "$2" = 0 ] && ! grep -q ' keccakf_round$' "$tmp/perf.rows"; then
		# perf 6.1 on arm64 fills a module without a file from kallsyms
		# only when a kernel sample loaded kallsyms first
		measured "$1: perf names no function in [sha3_generic]: $(grep -v '^#' "$tmp/perf.rep" | head -1)"
		return
	fi
	# An address no function of the .ko covers (past them: arm64's module
	# PLT) perf leaves unnamed, where hwc names it from kallsyms: told, and
	# left out of both, rows and lines.
	if grep -q ' 0x[0-9a-f]*$' "$tmp/perf.rows"; then
		measured "$1: perf leaves unnamed: $(grep ' 0x[0-9a-f]*$' "$tmp/perf.rows" | tr '\n' ';')"
		grep -v ' 0x[0-9a-f]*$' "$tmp/perf.rows" >"$tmp/named"
		mv "$tmp/named" "$tmp/perf.rows"
		awk 'NR == FNR { named[$3] = 1; next } named[$3]' "$tmp/perf.rows" "$tmp/hwc.rows" >"$tmp/named"
		mv "$tmp/named" "$tmp/hwc.rows"
	fi
	cmp -s "$tmp/hwc.rows" "$tmp/perf.rows" ||
		fail "$1: hwc's rows differ from perf's: $(tr '\n' ';' <"$tmp/perf.rows")"
	# perf script prints a module's DSO as its .ko's path where hwc script
	# prints [sha3_generic], as both reports do
	perf script --kallsyms="$tmp/kallsyms" -i "$tmp/m.data" -F ip,sym,dso >"$tmp/perf.scr" 2>"$tmp/err" ||
		fail "$1: perf script: $(cat "$tmp/err")"
	sed 's|(/lib/modules/.*/sha3_generic\.ko[.a-z]*)$|([sha3_generic])|' "$tmp/perf.scr" |
		grep '(\[sha3_generic\])$' | awk '{ print $1, $2 }' >"$tmp/perf.lines"
	awk 'NR == FNR { if ($2 == "[unknown]") unnamed[$1] = 1; next } !unnamed[$1]' \
		"$tmp/perf.lines" "$tmp/hwc.lines" >"$tmp/named"
	mv "$tmp/named" "$tmp/hwc.lines"
	grep -v ' \[unknown\]$' "$tmp/perf.lines" >"$tmp/named"
	mv "$tmp/named" "$tmp/perf.lines"
	cmp -s "$tmp/hwc.lines" "$tmp/perf.lines" ||
		fail "$1: hwc script differs from perf script: $(diff "$tmp/hwc.lines" "$tmp/perf.lines" | grep '^[-+][0-9a-f]' | head -5)"
}

compare "with sha3_generic.ko" 1
# The recording names the module by its .ko, with the loaded module's
# build-id (its notes in /sys/module: the file on disk could be another
# build).
loaded=$(od -An -tx1 -j16 -N20 /sys/module/sha3_generic/notes/.note.gnu.build-id | tr -d ' \n')
perf buildid-list -i "$tmp/m.data" >"$tmp/ids" 2>"$tmp/err" || fail "perf buildid-list: $(cat "$tmp/err")"
grep -q "^$loaded .*/sha3_generic\.ko$" "$tmp/ids" ||
	fail "no build-id $loaded for sha3_generic.ko in the recording: $(tr '\n' ';' <"$tmp/ids")"
# Compressed, the .ko hidden: the same rows and no warning; the recording
# names the compressed file with the loaded module's build-id, but a
# .ko.zst, which perf does not take for a module: "[sha3_generic]", as
# perf record names it, so that perf report names it from kallsyms.
mv "$dir/sha3_generic.ko" "$tmp/sha3_generic.ko"
for c in .gz .xz .zst; do
	"$PMU_DIR/kernel_modules" compress $c "$tmp/sha3_generic.ko" || fail "compress $c"
	mv "$tmp/sha3_generic.ko$c" "$dir/"
	must=1
	[ $c = .zst ] && must=0 # perf reads no .ko.zst (perf 6.12 neither)
	compare "with sha3_generic.ko$c" $must
	grep -q "sha3_generic" "$tmp/hwc.err" && fail "with sha3_generic.ko$c: hwc report warns: $(cat "$tmp/hwc.err")"
	if [ $c = .zst ]; then
		grep -q "sha3_generic\.ko" "$tmp/m.data" && fail "the recording names sha3_generic.ko.zst"
	else
		perf buildid-list -i "$tmp/m.data" >"$tmp/ids" 2>"$tmp/err" || fail "perf buildid-list: $(cat "$tmp/err")"
		grep -q "^$loaded .*/sha3_generic\.ko$c$" "$tmp/ids" ||
			fail "no build-id $loaded for sha3_generic.ko$c in the recording: $(tr '\n' ';' <"$tmp/ids")"
	fi
	rm "$dir/sha3_generic.ko$c"
done
# Truncated: a warning that names the file, the names of /proc/kallsyms.
"$PMU_DIR/kernel_modules" compress .zst "$tmp/sha3_generic.ko" || fail "compress .zst"
head -c 2000 "$tmp/sha3_generic.ko.zst" >"$dir/sha3_generic.ko.zst"
compare "with a truncated sha3_generic.ko.zst" 0
grep -q "warning: \[sha3_generic\]: $dir/sha3_generic\.ko\.zst: truncated" "$tmp/hwc.err" ||
	fail "with a truncated sha3_generic.ko.zst: no warning from hwc report: $(cat "$tmp/hwc.err")"
measured "with a truncated sha3_generic.ko.zst: $(cat "$tmp/hwc.err")"
rm "$dir/sha3_generic.ko.zst" "$tmp/sha3_generic.ko.zst"
mv "$tmp/sha3_generic.ko" "$dir/sha3_generic.ko"
# Hidden: moved out of /lib/modules (a renamed file there, sha3_generic.ko.hidden,
# must not be taken for the module either).
mv "$dir/sha3_generic.ko" "$tmp/sha3_generic.ko"
: >"$dir/sha3_generic.ko.old"
compare "from /proc/kallsyms" 0
grep -q "sha3_generic\.ko" "$tmp/m.data" && fail "the recording names a file for sha3_generic without its .ko"
rm -f "$dir/sha3_generic.ko.old"
mv "$tmp/sha3_generic.ko" "$dir/sha3_generic.ko"
finish
