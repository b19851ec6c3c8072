# hwc: CPU performance counters for Linux.
#   make                  build libhwc (shared + static) and the tools into $(BUILD)
#   make check            run the whole test suite
#   make check-sanitize   the same suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench            run the benchmarks against perf and PAPI
#   make install PREFIX=/opt/hwc [DESTDIR=...]

VERSION   := 0.1.0
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
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
CPPFLAGS  += -Iinclude -D_GNU_SOURCE
LDLIBS_HWC := -lpfm -lpthread

# Workloads are what we measure: never instrumented.
WORK_CFLAGS := -std=gnu11 -O1 -g $(WARN) -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
CFLAGS    += -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
endif

# Objects of one shared library: $(call objs,dir)
objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard $(1)/*.c))

LIBHWC_OBJS := $(call objs,src)
HWC_OBJS    := $(call objs,tools/hwc)
TEST_SRCS   := $(wildcard tests/*.c)
TEST_BINS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# Programs that run a workload: the bundled workloads and test helpers.
WORK_SRCS   := $(wildcard workloads/*.c)
WORK_BINS   := $(patsubst workloads/%.c,$(BUILD)/workloads/%,$(WORK_SRCS))
MAN_PAGES   := $(wildcard docs/*.[1-8])
BENCH_SRCS  := $(wildcard bench/*.c)
BENCH_BINS  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# Tools find libhwc next to them in the build tree and after install.
RPATH     := -Wl,-rpath,'$$ORIGIN/../lib'

.PHONY: all check check-sanitize bench install uninstall clean
all: $(BUILD)/lib/libhwc.so $(BUILD)/lib/libhwc.a $(BUILD)/bin/hwc $(BUILD)/lib/pkgconfig/libhwc.pc \
     $(WORK_BINS) $(TEST_BINS)

$(BUILD)/obj/%.o: %.c $(wildcard include/hwc/*.h) $(wildcard src/*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD):
	@mkdir -p $(BUILD)/lib $(BUILD)/bin $(BUILD)/tests $(BUILD)/workloads

$(BUILD)/lib/libhwc.so.$(VERSION): $(LIBHWC_OBJS) src/libhwc.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libhwc.so.0 -Wl,--version-script=src/libhwc.map \
		-Wl,--no-undefined -o $@ $(LIBHWC_OBJS) $(LDLIBS_HWC)
$(BUILD)/lib/libhwc.so: $(BUILD)/lib/libhwc.so.$(VERSION)
	ln -sf libhwc.so.$(VERSION) $(BUILD)/lib/libhwc.so.0
	ln -sf libhwc.so.$(VERSION) $@
$(BUILD)/lib/libhwc.a: $(LIBHWC_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/pkgconfig/libhwc.pc: libhwc.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/bin/hwc: $(HWC_OBJS) $(BUILD)/lib/libhwc.so
	$(CC) $(LDFLAGS) -o $@ $(HWC_OBJS) -L$(BUILD)/lib -lhwc -lm $(RPATH)

# Tests use the public API through the shared library, like any client.
$(BUILD)/tests/%: tests/%.c tests/check.h $(BUILD)/lib/libhwc.so
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lhwc -lpthread -lm $(RPATH)

$(BUILD)/workloads/%: workloads/%.c | $(BUILD)
	$(CC) $(CPPFLAGS) $(WORK_CFLAGS) -o $@ $< -lpthread -lm

check: all
	HWC_BUILD=$(abspath $(BUILD)) tests/run

check-sanitize:
	$(MAKE) BUILD=build-san SANITIZE=1 check

# Benchmarks link the peers they compare with (PAPI) and are never sanitized.
$(BUILD)/bench/%: bench/%.c $(BUILD)/lib/libhwc.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=gnu11 -O2 -g $(WARN) -o $@ $< -L$(BUILD)/lib -lhwc -lpapi -lm $(RPATH)

bench: all $(BENCH_BINS)
	HWC_BUILD=$(abspath $(BUILD)) bench/run

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/hwc \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 755 $(BUILD)/bin/hwc $(DESTDIR)$(BINDIR)/
	install -m 755 $(BUILD)/lib/libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhwc.so.0
	ln -sf libhwc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhwc.so
	install -m 644 $(BUILD)/lib/libhwc.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/hwc/*.h $(DESTDIR)$(INCDIR)/hwc/
	install -m 644 $(BUILD)/lib/pkgconfig/libhwc.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hwc $(DESTDIR)$(LIBDIR)/libhwc.* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/libhwc.pc
	rm -rf $(DESTDIR)$(INCDIR)/hwc

clean:
	rm -rf build build-san
