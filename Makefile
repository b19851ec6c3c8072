# hwc: CPU performance counters for Linux.
#   make                  build libhwc (shared + static) and the tools into $(BUILD)
#   make check            run the whole test suite
#   make check-sanitize   the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench            run the benchmarks against perf and PAPI
#   make install PREFIX=/opt/hwc [DESTDIR=...]
#   make ARCH=arm64       cross-build for aarch64 into build-arm64 (Debian's
#                         gcc-aarch64-linux-gnu and :arm64 libraries; scripts/deps arm64)

.DEFAULT_GOAL := all
# One version for everything: the public header's HWC_VERSION_STRING, which
# hwc --version prints; every .pc file and the libraries' file names take it.
VERSION   := $(shell sed -n 's/^.define HWC_VERSION_STRING "\(.*\)"$$/\1/p' include/hwc/hwc.h)
PREFIX    ?= /usr/local
DESTDIR   ?=
# ARCH=arm64 on another host cross-compiles with Debian's cross compiler;
# the :arm64 multiarch libraries are on its default search path.
ifeq ($(ARCH),arm64)
ifneq ($(shell uname -m),aarch64)
CC        := aarch64-linux-gnu-gcc
AR        := aarch64-linux-gnu-ar
endif
BUILD     ?= build-arm64
endif
BUILD     ?= build
# The machine the build is for, as the compiler names it.
TARGET    := $(shell $(CC) -dumpmachine)
X86       := $(if $(filter x86_64-% i386-% i486-% i586-% i686-%,$(TARGET)),1)
BINDIR    := $(PREFIX)/bin
LIBDIR    := $(PREFIX)/lib
INCDIR    := $(PREFIX)/include
MANDIR    := $(PREFIX)/share/man

CC        ?= cc
OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wformat=2 -Wno-format-nonliteral -Wno-format-truncation -Wvla
CFLAGS    ?=
CFLAGS    += -std=gnu11 $(OPT) $(WARN) -fno-omit-frame-pointer
# Each object's strings stay in its own .rodata: merged across objects, a
# string of hwc stat's could share a tail with one of any tool's, pages
# away, and cost a page fault more (issue 13).
CFLAGS    += -fno-merge-constants
CPPFLAGS  += -Iinclude -D_GNU_SOURCE
# elfutils (libdw, libelf) and libzstd are not linked: libhwc loads them on
# first use (src/dl.c), so that a command that only counts does not map them.
LDLIBS_HWC := -ldl -liberty -lpthread
# perf's JSON event tables: where `make install EVENTS_DIR=...` puts them.
EVENTS_INSTALL_DIR := $(PREFIX)/share/hwc/events

# Workloads are what we measure: never instrumented.
WORK_CFLAGS := -std=gnu11 -O1 -g $(WARN) -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
endif

# Objects of one shared library: $(call objs,dir)
objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard $(1)/*.c))

LIBHWC_OBJS := $(call objs,src)
# Shared by every tool: output write errors and strict option numbers.
TOOLS_COMMON_OBJS := $(call objs,tools/common)
HWC_OBJS    := $(call objs,tools/hwc) $(call objs,tools/profile) $(TOOLS_COMMON_OBJS)
# hwc serve is the program hwc-serve, which `hwc serve` runs: only it links
# the HTTP libraries.  It takes what it shares with hwc from an archive of
# hwc's objects.
SERVE_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/hwc/serve*.c))
HWC_OBJS    := $(filter-out $(SERVE_OBJS),$(HWC_OBJS))
HWC_ARCHIVE := $(BUILD)/obj/hwc-tool.a
TEST_SRCS   := $(wildcard tests/*.c)
ifneq ($(X86),1)
TEST_SRCS   := $(filter-out tests/pctr_% tests/perfmon_% tests/compat_golden.c,$(TEST_SRCS))
endif
TEST_BINS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# Programs that run a workload: the bundled workloads and test helpers.
WORK_SRCS   := $(wildcard workloads/*.c)
WORK_BINS   := $(patsubst workloads/%.c,$(BUILD)/workloads/%,$(WORK_SRCS))
MAN_PAGES   := $(wildcard docs/*.[1-8])
BENCH_SRCS  := $(wildcard bench/*.c)
BENCH_BINS  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# The classic device interfaces: shim libraries that provide /dev/pctr and
# /dev/perfmon in user space (compat/common is linked into each), their
# <machine/*.h> headers and pkg-config files, and the pctr tool.
COMPAT_CPPFLAGS := -Icompat/pctr -Icompat/perfmon
COMPAT_HDRS     := $(wildcard compat/*/*.h compat/*/machine/*.h)
MACHINE_HDRS    := $(if $(X86),$(wildcard compat/*/machine/*.h))
PCTR_OBJS       := $(call objs,compat/pctr) $(call objs,compat/common)
PERFMON_OBJS    := $(call objs,compat/perfmon) $(call objs,compat/common)
PCTR_TOOL_OBJS  := $(call objs,tools/pctr) $(TOOLS_COMMON_OBJS)
# OpenBSD pctr and FreeBSD perfmon exist on x86 only (their headers are the
# x86 PERFEVTSEL and TSC): elsewhere they are not built, as on those systems.
ifeq ($(X86),1)
COMPAT_NAMES    := pctr perfmon
PCTR_TOOL       := $(BUILD)/bin/pctr
else
COMPAT_NAMES    :=
PCTR_TOOL       :=
endif
COMPAT_LIBS     := $(patsubst %,$(BUILD)/lib/lib%.so,$(COMPAT_NAMES))
# Every package's pkg-config file; all carry the rpath, so that a client
# built against a prefix off the loader's path starts with no LD_LIBRARY_PATH.
PC_FILES        := libhwc.pc.in $(if $(X86),compat/pctr/pctr.pc.in compat/perfmon/perfmon.pc.in) \
                   compat/cpc/libcpc.pc.in compat/pctx/libpctx.pc.in compat/pmc/libpmc.pc.in
PC_SED          = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|'
vpath %.pc.in $(dir $(PC_FILES))

# illumos cpc on Linux: libpctx.so.1, libcpc.so.1 (public headers in
# compat/), and the cputrack and cpustat tools (sharing tools/cpucmds/).
PCTX_OBJS    := $(call objs,compat/pctx)
CPC_OBJS     := $(call objs,compat/cpc)
CPUCMDS_OBJS := $(call objs,tools/cpucmds) $(TOOLS_COMMON_OBJS)
CPC_TOOLS    := $(BUILD)/bin/cputrack $(BUILD)/bin/cpustat
CPC_LIBS     := $(BUILD)/lib/libpctx.so $(BUILD)/lib/libcpc.so
CPC_PCS      := $(foreach p,libcpc libpctx,$(BUILD)/lib/pkgconfig/$(p).pc \
                  $(BUILD)/lib/pkgconfig/$(p)-uninstalled.pc)
CPC_HEADERS  := compat/cpc/libcpc.h compat/pctx/libpctx.h
CPC_SRC_OBJS := $(PCTX_OBJS) $(CPC_OBJS) $(call objs,tools/cpucmds) $(call objs,tools/cputrack) \
                $(call objs,tools/cpustat)
$(CPC_SRC_OBJS): CPPFLAGS += -Icompat/cpc -Icompat/pctx -Itools/cpucmds
# Tests of these interfaces build like any client: pkg-config only.
CPC_PKG      := PKG_CONFIG_PATH=$(BUILD)/lib/pkgconfig pkg-config

# FreeBSD hwpmc on Linux: libpmc.so.1 (<pmc.h> and <pmclog.h> in
# compat/pmc), and the pmcstat and pmccontrol tools.
PMC_OBJS     := $(call objs,compat/pmc)
PMC_LIB      := $(BUILD)/lib/libpmc.so
PMC_PCS      := $(BUILD)/lib/pkgconfig/libpmc.pc $(BUILD)/lib/pkgconfig/libpmc-uninstalled.pc
PMC_HEADERS  := compat/pmc/pmc.h compat/pmc/pmclog.h
PMC_TOOLS    := $(BUILD)/bin/pmcstat $(BUILD)/bin/pmccontrol
PMCSTAT_OBJS := $(call objs,tools/pmcstat) $(call objs,tools/profile) $(TOOLS_COMMON_OBJS)
PMCCONTROL_OBJS := $(call objs,tools/pmccontrol) $(TOOLS_COMMON_OBJS)
$(PMC_OBJS): CPPFLAGS += -Icompat/pmc
$(call objs,tools/pmcstat) $(call objs,tools/pmccontrol): CPPFLAGS += -Icompat/pmc -Itools/profile -Itools/pmcstat

# Tools find libhwc next to them in the build tree and after install.
RPATH     := -Wl,-rpath,'$$ORIGIN/../lib'

.PHONY: all check check-sanitize bench install uninstall clean
all: $(BUILD)/lib/libhwc.so $(BUILD)/lib/libhwc.a $(BUILD)/bin/hwc $(BUILD)/bin/hwc-serve \
     $(BUILD)/lib/pkgconfig/libhwc.pc \
     $(COMPAT_LIBS) $(PCTR_TOOL) $(CPC_LIBS) $(CPC_PCS) $(CPC_TOOLS) $(PMC_LIB) $(PMC_PCS) \
     $(PMC_TOOLS) \
     $(WORK_BINS) $(TEST_BINS)

$(BUILD)/obj/compat/%.o $(BUILD)/obj/tools/pctr/%.o: CPPFLAGS += $(COMPAT_CPPFLAGS)
$(BUILD)/obj/tools/hwc/%.o $(BUILD)/obj/tools/profile/%.o: CPPFLAGS += -Itools/profile
$(BUILD)/obj/tools/%.o: CPPFLAGS += -Itools/common
$(BUILD)/obj/src/pmu_events.o: CPPFLAGS += -DHWC_EVENTS_PREFIX_DIR='"$(EVENTS_INSTALL_DIR)"'
# Each object depends on the headers it includes: the compiler lists them
# (-MMD) in a .d file beside the object, read back here.  An object without
# its .d file (a build tree from before) is rebuilt.
# (Named one by one: a missing .d made by a pattern rule would be an
# intermediate file, which forces nothing.)
DEP_FILES := $(patsubst %.c,$(BUILD)/obj/%.d,$(wildcard src/*.c compat/*/*.c tools/*/*.c))
$(DEP_FILES):
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.d | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -fPIC -fvisibility=hidden -fno-semantic-interposition \
		-c $< -o $@
-include $(wildcard $(DEP_FILES))

$(BUILD):
	@mkdir -p $(BUILD)/lib $(BUILD)/bin $(BUILD)/tests $(BUILD)/workloads

$(BUILD)/lib/libhwc.so.$(VERSION): $(LIBHWC_OBJS) src/libhwc.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libhwc.so.0 -Wl,--version-script=src/libhwc.map \
		-Wl,--no-undefined -o $@ $(LIBHWC_OBJS) $(LDLIBS_HWC)
$(BUILD)/lib/libhwc.so: $(BUILD)/lib/libhwc.so.$(VERSION)
	ln -sf libhwc.so.$(VERSION) $(BUILD)/lib/libhwc.so.0
	ln -sf libhwc.so.$(VERSION) $@
$(BUILD)/lib/libhwc.a: $(LIBHWC_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/lib/pkgconfig/%.pc: %.pc.in Makefile include/hwc/hwc.h
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# ncurses draws hwc top's live view, json-c reads hwc diff --stat's JSON and
# zlib gzips hwc report --pprof: the tool links them, libhwc does not.  They
# are linked statically (zlib saves hwc stat ~0.1 ms of its start): as
# shared libraries the loader maps and relocates them in every run, which
# cost hwc stat ~0.5 MB of its peak RSS for code it never calls (and the
# emulated arm64 machine of scripts/pmu-vm has neither).  libm is not
# linked: hwc diff --stat loads it (dlopen) for the t distribution's exp,
# log and lgamma, whose static copies need the dynamic loader's CPU
# features (x86) or other libc internals (arm64); loading it cost every
# hwc stat ~0.1 ms.  The tool's sqrt, round and llround compile to
# instructions (no errno, no traps: hwc reads no FP exception flags).
# capstone is not linked: hwc annotate loads it (dlopen), as loading it
# costs 3.3 MB.
$(BUILD)/obj/tools/hwc/%.o $(BUILD)/obj/tools/profile/%.o: CFLAGS += -fno-math-errno -fno-trapping-math
HWC_TOOL_LIBS := -Wl,-Bstatic -lz -ljson-c -lncurses -ltinfo -Wl,-Bdynamic
HWC_LIBS := -L$(BUILD)/lib -lhwc $(HWC_TOOL_LIBS) -lm
# hwc itself links libhwc.a: with libhwc.so the loader searched
# $$ORIGIN/../lib's hwcaps directories, mapped and relocated one more
# library and bound its calls, ~0.15 ms of each hwc stat's start (issue
# 13).  Still only the public API: the tool's objects see <hwc/hwc.h>, and
# libhwc.so stays the library of every other program.
# The objects `hwc stat` runs are linked first, libhwc's among them (the
# archive then has no reason to take those members): the kernel maps an
# executable's pages 16 at a time around each page fault, and kept
# together they cost hwc stat 5 page faults fewer (127 to 122, the
# command's included) and 0.5-1.3% of its time (issue 13).  Filtered
# through the object lists, so that a source renamed or gone drops out
# (the archive gives its successor): a list that falls behind the code
# costs only the faults.
HWC_FIRST := $(filter $(HWC_OBJS) $(LIBHWC_OBJS),$(addprefix $(BUILD)/obj/,$(addsuffix .o, \
	tools/hwc/main tools/hwc/cli tools/hwc/stat tools/hwc/stat_print tools/common/out \
	src/counter src/event src/target src/cgroup src/error src/event_table src/metric \
	src/pmu src/sys)))
# Packed relative relocations (DT_RELR, glibc 2.36), where the toolchain
# has them: 34 KiB of relocations that ld.so reads at every start become
# 0.4 KiB.  Probed with the linker LDFLAGS pick, whose warning that it
# ignores the option (binutils' for arm64, lld 14) counts as a no.
HWC_RELR := $(shell echo 'int main(void){return 0;}' | $(CC) $(LDFLAGS) -x c - \
	-Wl,--fatal-warnings -Wl,-z,pack-relative-relocs -o /dev/null 2>/dev/null && \
	echo -Wl,-z,pack-relative-relocs)
$(BUILD)/bin/hwc: $(HWC_OBJS) $(HWC_FIRST) $(BUILD)/lib/libhwc.a
	$(CC) $(LDFLAGS) $(HWC_RELR) -o $@ $(HWC_FIRST) $(filter-out $(HWC_FIRST),$(HWC_OBJS)) \
		$(BUILD)/lib/libhwc.a $(HWC_TOOL_LIBS) $(LDLIBS_HWC)

# hwc-serve: libyaml (its web configuration) is static as json-c is;
# libmicrohttpd (HTTP, and HTTPS through GnuTLS) and libcrypt (bcrypt) are
# shared: GnuTLS does not link statically.
$(HWC_ARCHIVE): $(filter-out %/tools/hwc/main.o,$(HWC_OBJS))
	rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/bin/hwc-serve: $(SERVE_OBJS) $(HWC_ARCHIVE) $(BUILD)/lib/libhwc.so
	$(CC) $(LDFLAGS) -o $@ $(SERVE_OBJS) $(HWC_ARCHIVE) $(HWC_LIBS) -Wl,-Bstatic -lyaml -Wl,-Bdynamic \
		-lmicrohttpd -lcrypt -lpthread $(RPATH)

$(BUILD)/lib/libpctx.so.1: $(PCTX_OBJS) compat/pctx/libpctx.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libpctx.so.1 -Wl,--version-script=compat/pctx/libpctx.map \
		-Wl,--no-undefined -o $@ $(PCTX_OBJS)
$(BUILD)/lib/libcpc.so.1: $(CPC_OBJS) compat/cpc/libcpc.map $(BUILD)/lib/libhwc.so $(BUILD)/lib/libpctx.so
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libcpc.so.1 -Wl,--version-script=compat/cpc/libcpc.map \
		-Wl,--no-undefined -o $@ $(CPC_OBJS) -L$(BUILD)/lib -lpctx -lhwc -Wl,-rpath,'$$ORIGIN'
$(BUILD)/lib/libpmc.so.1: $(PMC_OBJS) compat/pmc/libpmc.map $(BUILD)/lib/libhwc.so
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libpmc.so.1 -Wl,--version-script=compat/pmc/libpmc.map \
		-Wl,--no-undefined -o $@ $(PMC_OBJS) -L$(BUILD)/lib -lhwc -lpthread -Wl,-rpath,'$$ORIGIN'
$(BUILD)/lib/%.so: $(BUILD)/lib/%.so.1
	ln -sf $(notdir $<) $@
# pmcstat and pmccontrol are FreeBSD programs on libpmc; pmcstat also
# reads logs through libhwc and the profile it shares with hwc report.
$(BUILD)/bin/pmcstat: $(PMCSTAT_OBJS) $(PMC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(PMCSTAT_OBJS) -L$(BUILD)/lib -lpmc -lhwc -lm $(RPATH)
$(BUILD)/bin/pmccontrol: $(PMCCONTROL_OBJS) $(PMC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(PMCCONTROL_OBJS) -L$(BUILD)/lib -lpmc $(RPATH)

# pkg-config prefers NAME-uninstalled.pc: the build tree, for the tests.
$(BUILD)/lib/pkgconfig/%-uninstalled.pc: $(BUILD)/lib/pkgconfig/%.pc
	sed -e 's|^libdir=.*|libdir=$(abspath $(BUILD))/lib|' \
	    -e 's|^includedir=.*|includedir=$(abspath compat)/$(patsubst lib%,%,$*)|' \
	    -e 's|^Libs: .*|Libs: -L$${libdir} -Wl,-rpath,$${libdir} -l$(patsubst lib%,%,$*)|' $< > $@

$(BUILD)/bin/cputrack: $(call objs,tools/cputrack) $(CPUCMDS_OBJS) $(CPC_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(call objs,tools/cputrack) $(CPUCMDS_OBJS) -L$(BUILD)/lib -lcpc -lpctx \
		-lhwc $(RPATH)
$(BUILD)/bin/cpustat: $(call objs,tools/cpustat) $(CPUCMDS_OBJS) $(CPC_LIBS)
	$(CC) $(LDFLAGS) -o $@ $(call objs,tools/cpustat) $(CPUCMDS_OBJS) -L$(BUILD)/lib -lcpc -lpctx \
		-lpthread $(RPATH)

$(BUILD)/tests/cpc_%: tests/cpc_%.c tests/check.h tests/cpc_test.h $(CPC_LIBS) $(CPC_PCS)
	$(CC) -D_GNU_SOURCE $(CFLAGS) $(LDFLAGS) -o $@ $< $$($(CPC_PKG) --cflags --libs libcpc libpctx) -lpthread
$(BUILD)/tests/pmc_%: tests/pmc_%.c tests/check.h tests/pmc_test.h $(PMC_LIB) $(PMC_PCS)
	$(CC) -D_GNU_SOURCE $(CFLAGS) $(LDFLAGS) -o $@ $< $$($(CPC_PKG) --cflags --libs libpmc) -lpthread
$(BUILD)/tests/pctx_%: tests/pctx_%.c tests/check.h tests/cpc_test.h $(CPC_LIBS) $(CPC_PCS)
	$(CC) -D_GNU_SOURCE $(CFLAGS) $(LDFLAGS) -o $@ $< $$($(CPC_PKG) --cflags --libs libcpc libpctx) -lpthread


# Shim libraries export only the calls they interpose (and rdpmc's helper);
# they find libhwc beside them.
# Every compat library is named as the others: libNAME.so.1 (its soname)
# and libNAME.so; only libhwc carries the project's version.
$(BUILD)/lib/libpctr.so.1: $(PCTR_OBJS)
$(BUILD)/lib/libperfmon.so.1: $(PERFMON_OBJS)
$(patsubst %,%.1,$(COMPAT_LIBS)): $(BUILD)/lib/libhwc.so
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(@F) \
		-Wl,--no-undefined -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lhwc -lpthread -lm \
		-Wl,-rpath,'$$ORIGIN'

# pctr(1) is an OpenBSD program: <machine/pctr.h> and /dev/pctr, plus
# libhwc's event list for -l.
$(BUILD)/bin/pctr: $(PCTR_TOOL_OBJS) $(BUILD)/lib/libpctr.so
	$(CC) $(LDFLAGS) -o $@ $(PCTR_TOOL_OBJS) -L$(BUILD)/lib -lpctr -lhwc $(RPATH)

# Tests use the public API through the shared library, like any client;
# pctr_* and perfmon_* tests are clients of the device shims.
TEST_LIBS := -lhwc
$(BUILD)/tests/pctr_%: TEST_LIBS := -lpctr -lhwc
$(BUILD)/tests/perfmon_%: TEST_LIBS := -lperfmon -lhwc
# libpfm4 loaded before libhwc, as a PAPI program has it.
$(BUILD)/tests/pfm_shared: TEST_LIBS := -lpfm -lhwc
$(BUILD)/tests/%: tests/%.c tests/check.h $(BUILD)/lib/libhwc.so $(COMPAT_LIBS) $(COMPAT_HDRS)
	$(CC) $(CPPFLAGS) $(COMPAT_CPPFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD)/lib $(TEST_LIBS) \
		-lpthread -lm $(RPATH)

# The drivers' tests link the shim's objects with a devshim_event() of their
# own: a software event standing in for the hardware this host lacks.
$(BUILD)/tests/pctr_driver: $(filter-out %/event.o,$(PCTR_OBJS))
$(BUILD)/tests/perfmon_driver: $(filter-out %/event.o,$(PERFMON_OBJS))
$(BUILD)/tests/pctr_driver $(BUILD)/tests/perfmon_driver: $(BUILD)/tests/%: tests/%.c tests/check.h \
		$(BUILD)/lib/libhwc.so
	$(CC) $(CPPFLAGS) $(COMPAT_CPPFLAGS) $(CFLAGS) -o $@ $< $(filter %.o,$^) -L$(BUILD)/lib -lhwc \
		-lpthread -lm $(RPATH)

# The sorted symbol tables checked against libdw: an internal of libhwc,
# reached through src/ and the static library; it calls libdw itself.
$(BUILD)/tests/symtab: tests/symtab.c tests/check.h src/symbol_internal.h $(BUILD)/lib/libhwc.a
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libhwc.a $(LDLIBS_HWC) \
		-ldw -lelf

# The counting core, and which events of a refused weak group stay grouped
# (internals of libhwc, given made-up events: no Intel PMU here).
$(BUILD)/tests/counting: tests/counting.c tests/check.h src/internal.h $(BUILD)/lib/libhwc.a
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libhwc.a $(LDLIBS_HWC)

# hwc_output with the build-id cache's internal way of writing through it.
$(BUILD)/tests/output: tests/output.c tests/check.h src/internal.h $(BUILD)/lib/libhwc.a
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libhwc.a $(LDLIBS_HWC)

# The JSON event tables' reader: an internal of libhwc, as symtab is.
$(BUILD)/tests/pmu_events: tests/pmu_events.c tests/check.h src/pmu_events.h src/metric_expr.h $(BUILD)/lib/libhwc.a
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libhwc.a $(LDLIBS_HWC)

# The metric expression engine: an internal of libhwc; json-c walks the tree.
$(BUILD)/tests/metric_expr: tests/metric_expr.c tests/check.h src/metric_expr.h $(BUILD)/lib/libhwc.a
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libhwc.a $(LDLIBS_HWC) -ljson-c -lm

# hwc stat's formatter, fed values this machine cannot produce (no PMU).
STAT_PRINT := tools/hwc/stat_print.c tools/hwc/json.c
$(BUILD)/tests/stat_print: tests/stat_print.c $(STAT_PRINT) tools/hwc/stat.h tools/hwc/json.h \
		tests/check.h $(BUILD)/lib/libhwc.so
	$(CC) $(CPPFLAGS) -Itools/hwc $(CFLAGS) -o $@ tests/stat_print.c $(STAT_PRINT) \
		-L$(BUILD)/lib -lhwc -lm $(RPATH)

$(BUILD)/workloads/%: workloads/%.c | $(BUILD)
	$(CC) $(CPPFLAGS) $(WORK_CFLAGS) -o $@ $< -lpthread -lm

check: all
	HWC_BUILD=$(abspath $(BUILD)) tests/run

check-sanitize:
	$(MAKE) BUILD=build-san SANITIZE=1 check

# The start-up floor links libc alone, as bin/hwc does: libhwc.so and
# libpapi would add their loading to the time it stands for.
$(BUILD)/bench/count_floor: bench/count_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 -O2 -g $(WARN) -o $@ $<

# Benchmarks link the peers they compare with (PAPI) and are never sanitized.
$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/lib/libhwc.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 -O2 -g $(WARN) -o $@ $< -L$(BUILD)/lib -lhwc -lpapi -lm $(RPATH)

# The device reads, built once per driver with a software event standing in
# for the hardware (see bench/pctr_read.c).
BENCH_BINS += $(BUILD)/bench/perfmon_read
$(BUILD)/bench/pctr_read: DEVICE := PCTR
$(BUILD)/bench/pctr_read: $(filter-out %/event.o,$(PCTR_OBJS))
$(BUILD)/bench/perfmon_read: DEVICE := PERFMON
$(BUILD)/bench/perfmon_read: $(filter-out %/event.o,$(PERFMON_OBJS))
$(BUILD)/bench/pctr_read $(BUILD)/bench/perfmon_read: bench/pctr_read.c bench/bench.h $(BUILD)/lib/libhwc.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(COMPAT_CPPFLAGS) -DBENCH_$(DEVICE) -std=gnu11 -O2 -g $(WARN) -o $@ $< \
		$(filter %.o,$^) -L$(BUILD)/lib -lhwc -lpthread -lm $(RPATH)

$(BUILD)/bench/cpc_%: bench/cpc_%.c bench/bench.h $(CPC_LIBS) $(CPC_PCS)
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -std=gnu11 -O2 -g $(WARN) -o $@ $< \
		$$($(CPC_PKG) --cflags --libs libcpc libpctx) -lpapi

bench: all $(BENCH_BINS)
	HWC_BUILD=$(abspath $(BUILD)) bench/run

# The .pc files are made at install: the build's copies name the PREFIX the
# build had, which may not be this one.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/hwc \
		$(DESTDIR)$(INCDIR)/hwc-compat/machine $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 755 $(BUILD)/bin/hwc $(BUILD)/bin/hwc-serve $(PCTR_TOOL) $(CPC_TOOLS) $(PMC_TOOLS) $(DESTDIR)$(BINDIR)/
	for l in libpctx libcpc libpmc $(patsubst %,lib%,$(COMPAT_NAMES)); do \
		install -m 755 $(BUILD)/lib/$$l.so.1 $(DESTDIR)$(LIBDIR)/ && \
		ln -sf $$l.so.1 $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; done
	install -m 644 $(CPC_HEADERS) $(PMC_HEADERS) $(DESTDIR)$(INCDIR)/
	install -m 755 $(BUILD)/lib/libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhwc.so.0
	ln -sf libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhwc.so
	install -m 644 $(BUILD)/lib/libhwc.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/hwc/*.h $(DESTDIR)$(INCDIR)/hwc/
	$(if $(MACHINE_HDRS),install -m 644 $(MACHINE_HDRS) $(DESTDIR)$(INCDIR)/hwc-compat/machine/)
	for pc in $(PC_FILES); do \
		$(PC_SED) $$pc > $(DESTDIR)$(LIBDIR)/pkgconfig/$$(basename $$pc .in) || exit 1; done
	for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
# EVENTS_DIR=DIR: perf's JSON event tables (tools/perf/pmu-events/arch: x86/,
# arm64/, ... with their mapfile.csv) go to PREFIX/share/hwc/events.
	$(if $(EVENTS_DIR),test -f $(EVENTS_DIR)/x86/mapfile.csv -o -f $(EVENTS_DIR)/arm64/mapfile.csv || \
		{ echo "EVENTS_DIR=$(EVENTS_DIR) holds no x86/ or arm64/ mapfile.csv" >&2; exit 1; })
	$(if $(EVENTS_DIR),install -d $(DESTDIR)$(EVENTS_INSTALL_DIR) && \
		cp -R --no-preserve=all $(EVENTS_DIR)/. $(DESTDIR)$(EVENTS_INSTALL_DIR)/ && \
		chmod -R a+rX $(DESTDIR)$(EVENTS_INSTALL_DIR))

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hwc $(DESTDIR)$(BINDIR)/hwc-serve $(DESTDIR)$(BINDIR)/pctr $(DESTDIR)$(LIBDIR)/libhwc.* \
		$(patsubst %,$(DESTDIR)$(LIBDIR)/lib%.so*,$(COMPAT_NAMES)) \
		$(patsubst %.in,$(DESTDIR)$(LIBDIR)/pkgconfig/%,$(notdir $(PC_FILES)))
	rm -f $(DESTDIR)$(BINDIR)/cputrack $(DESTDIR)$(BINDIR)/cpustat \
		$(DESTDIR)$(LIBDIR)/libcpc.so* $(DESTDIR)$(LIBDIR)/libpctx.so* \
		$(DESTDIR)$(INCDIR)/libcpc.h $(DESTDIR)$(INCDIR)/libpctx.h
	rm -f $(DESTDIR)$(BINDIR)/pmcstat $(DESTDIR)$(BINDIR)/pmccontrol $(DESTDIR)$(LIBDIR)/libpmc.so* \
		$(DESTDIR)$(INCDIR)/pmc.h $(DESTDIR)$(INCDIR)/pmclog.h
	rm -rf $(DESTDIR)$(INCDIR)/hwc $(DESTDIR)$(INCDIR)/hwc-compat
	for m in $(MAN_PAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; done
	rm -rf $(DESTDIR)$(EVENTS_INSTALL_DIR)
	-rmdir $(DESTDIR)$(PREFIX)/share/hwc 2>/dev/null

clean:
	rm -rf build build-san build-arm64

# ------------------------------------------------------------------ hardware suite
# tests/pmu/: hardware tests for arm64, run inside the emulated ARMv8 machine
# of scripts/pmu-vm (QEMU's PMU, -icount: exact instruction counts).
#   make ARCH=arm64 pmu-tests   build them and stage the suite in $(BUILD)/pmu-suite
#   make check-pmu              cross-build, then run the suite in scripts/pmu-vm
# The staged suite: its runner and shell tests, the programs in pmu/, and
# native/: the arm64 builds of the native tests that need no PMU (src/: the
# golden files they read through HWC_SRC; build/: the workloads, hwc and
# libhwc they find through HWC_BUILD).
PMU_SRCS   := $(wildcard tests/pmu/*.c)
PMU_BINS   := $(patsubst tests/pmu/%.c,$(BUILD)/tests/pmu/%,$(PMU_SRCS))
PMU_SUITE  := $(BUILD)/pmu-suite
# The native tests that run there; those that cannot, with why: tests/pmu/run.
PMU_NATIVE := output sample_parse fastread userpage perfdata stat_print golden machine \
              listing counting spawn overflow cpc_enable cpc_set_create cpc_generic_events \
              cpc_bind_curlwp cpc_buf_create cpc_open cpc_seterrhndlr cpc_terminate \
              pctx_capture pctx_set_events pmc_counting pmc_errors pmc_pie pmc_pipe \
              pmc_sigio pmc_tunables cpc_npic pmc_pmu
PMU_CFLAGS := -std=gnu11 -O1 -g $(WARN) -fno-omit-frame-pointer
.PHONY: pmu-tests check-pmu
$(BUILD)/tests/pmu/work: tests/pmu/work.c tests/pmu/pmu.h tests/check.h | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PMU_CFLAGS) -o $@ $< -lpthread
$(BUILD)/tests/pmu/cpc_%: tests/pmu/cpc_%.c tests/pmu/pmu.h tests/check.h $(CPC_LIBS) $(CPC_PCS)
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(PMU_CFLAGS) -o $@ $< $$($(CPC_PKG) --cflags --libs libcpc libpctx) -lpthread
$(BUILD)/tests/pmu/pmc_%: tests/pmu/pmc_%.c tests/pmu/pmu.h tests/check.h $(PMC_LIB) $(PMC_PCS)
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(PMU_CFLAGS) -o $@ $< $$($(CPC_PKG) --cflags --libs libpmc) -lpthread
$(BUILD)/tests/pmu/%: tests/pmu/%.c tests/pmu/pmu.h tests/check.h $(BUILD)/lib/libhwc.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PMU_CFLAGS) -o $@ $< -L$(BUILD)/lib -lhwc -lpthread -lm $(PMU_LIBS_$*) $(RPATH)
# kernel_modules reads the .ko's symbol table, its oracle, with libelf, and
# compresses it as distributions do (zlib, liblzma, libzstd).
PMU_LIBS_kernel_modules := -lelf -lz -llzma -lzstd
JSON_TEST_TREE := /usr/local/share/hwc-test/events
# scripts/perf-arm64 builds it (scripts/deps runs that)
PERF_ARM64 := /usr/local/share/hwc-test/perf-arm64/perf
pmu-tests: all $(PMU_BINS)
	rm -rf $(PMU_SUITE) && mkdir -p $(PMU_SUITE)/pmu $(PMU_SUITE)/native $(PMU_SUITE)/src/tests
	cp tests/pmu/run tests/pmu/lib $(wildcard tests/pmu/*.sh) $(PMU_SUITE)/
	cp $(PMU_BINS) $(PMU_SUITE)/pmu/
	cp $(addprefix $(BUILD)/tests/,$(PMU_NATIVE)) $(PMU_SUITE)/native/
	cp -r tests/golden tests/fuzz $(PMU_SUITE)/src/tests/
	mkdir -p $(PMU_SUITE)/build/bin $(PMU_SUITE)/build/lib
	cp -r $(BUILD)/workloads $(PMU_SUITE)/build/
	cp $(BUILD)/bin/hwc $(PMU_SUITE)/build/bin/
	cp -P $(BUILD)/lib/libhwc.so* $(PMU_SUITE)/build/lib/
	# perf's arm64 JSON tables, for pmu/neoverse_n1_metrics.sh (when extracted)
	if [ -d $(JSON_TEST_TREE)/arm64 ]; then mkdir -p $(PMU_SUITE)/events && \
		cp -r $(JSON_TEST_TREE)/arm64 $(PMU_SUITE)/events/; fi
	# perf 6.12 for arm64, pmu/neoverse_n1_oracle.sh's oracle (when built)
	if [ -x $(PERF_ARM64) ]; then mkdir -p $(PMU_SUITE)/perf-6.12 && \
		cp $(PERF_ARM64) $(PMU_SUITE)/perf-6.12/; fi
# The modules pmu/kernel_modules and kernel_modules.sh load.
PMU_MODULES := $(addprefix --module ,sha3_generic af_alg algif_hash)
check-pmu:
	$(MAKE) ARCH=arm64 pmu-tests
	scripts/pmu-vm $(PMU_MODULES) --copy build-arm64/pmu-suite -- sh pmu-suite/run
	scripts/pmu-vm --cpu neoverse-n1 --copy build-arm64/pmu-suite -- \
		env PMU_CPU=neoverse-n1 sh pmu-suite/run neoverse_n1
