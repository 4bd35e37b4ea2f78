# stripebackup: PGXS build of the extension library, the engine and the
# stripebackup command.
#
#   make                 build everything
#   make install         install the library, SQL files and the command (and
#                        a link to it in CLI_LINK_DIR, /usr/local/bin; empty: none)
#   make test            install dependencies, build, install, run every test
#   make quickstart      build, then back up and restore a throwaway cluster
#   make unit            engine unit tests only (no PostgreSQL needed)
#   make export-check    the library exports what the server looks up by name, nothing else
#   make layer-check     each engine folder includes only the folders below it (test/layers.sh)
#   make bench           throughput beside pg_basebackup, pgBackRest and fio
#   make bench-wal       WAL archiving and fetching beside pgBackRest and basic_archive
#   make bench-devices   balance and source reads on devices slowed by the kernel (root)
#   make bench-files     memory and files a second with 100k to 1M small files
#   make bench-relations a cluster of 100k relation files, online, beside the peers
#   make bench-sweep     MB/s and memory of clusters of 1, 4 and 16 GB
#   make bench-incr      incremental backups and a chain's restore beside pgBackRest
#   make bench-summary   incremental backups from WAL summaries on 18 beside pg_basebackup (root)
#   make bench-delta     a stale copy refreshed in place beside pgBackRest --delta
#   make bench-encryption  backup and restore with and without encryption
#   make bench-s3        backups and restores to buckets (s3rver) beside local folders
#   make unit-asan       the unit tests under AddressSanitizer and UBSan (gcc), as CI runs them
#   make coverage        line and branch coverage of the engine by the unit tests (gcovr)
#   make coverage-check  the same, failing below COVERAGE_MIN percent of lines (default 90)
#                        or a subsystem below its floor (test/coverage-subsystems)
#   make fuzz            build the libFuzzer targets (clang: scripts/install-deps.sh --fuzz)
#   make fuzz-run        run every fuzz target at once, FUZZ_SECONDS each (default 600)
#   make fuzz-merge      minimize what fuzz-run found into test/fuzz/corpus
#   make fuzz-seeds      regenerate the seed corpus from real backups
#   make fuzz-replay     run the fuzz corpus once through the targets, under ASan/UBSan (gcc)
#   (test/fuzz/README.md says more)

EXTENSION = stripebackup
MODULE_big = stripebackup
DATA = sql/stripebackup--0.1.sql
PGFILEDESC = "stripebackup - weighted-stripe online backups"

# The engine is src/engine and its subfolders (src/engine/README.md lists them).
ENGINE_SRCS = $(sort $(shell find src/engine -name '*.c'))
CLI_SRCS = $(sort $(wildcard src/cli/*.c))
UNIT_SRCS = $(sort $(shell find test/unit -name '*.c'))
EXTENSION_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/extension/*.c)))

# The engine comes in as a static library (below), not as objects of its own.
OBJS = $(EXTENSION_OBJS)

ENGINE_LIBS = -lzstd -luring -lxxhash -lcjson -lisal -lcurl -lxml2 -lcrypto -lpthread -lm
ENGINE_LIB = build/libsbengine.a
SHLIB_LINK = $(ENGINE_LIB) $(ENGINE_LIBS)
# The extension sees the engine's public API (include/) only.  Its symbols are
# hidden but for what the server looks up by name (test/exports.sh checks
# them): those are declared PGDLLEXPORT, which PostgreSQL 15 leaves empty on
# Linux and which is given here the meaning PostgreSQL 16 gives it.
PG_CPPFLAGS = -I$(srcdir)/include '-DPGDLLEXPORT=__attribute__((visibility("default")))'
PG_CFLAGS = -Werror -pthread -fvisibility=hidden

# pg_regress (sql/, expected/) on a throwaway instance: make installcheck
REGRESS = stripebackup_args
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_regress

CLI = src/cli/stripebackup
UNIT = test/unit/unit_tests

EXTRA_CLEAN = $(CLI) $(UNIT) $(EXTENSION_OBJS:.o=.d) tmp_check tmp_check_regress build

# Our objects run threads: no LLVM bitcode for the JIT.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# ---------- the engine, the command and the unit tests: no PostgreSQL ----------
#
# They build with flags of their own, not the server's: only our include
# folders, so a PostgreSQL header included by mistake does not compile, and
# none of the server's -Wno-... switches, so no warning is hidden.  Objects
# mirror the source tree in one build folder per flavour: build/ (this one),
# build/asan/, build/coverage/, build/fuzz/; each flavour sets SB_FLAVOUR_CFLAGS.
# The engine's own headers (src/engine) are for the engine and its tests
# (unit, fuzz) only: the command, like the extension, sees include/ alone.

SB_CPPFLAGS = -D_GNU_SOURCE -I$(srcdir)/include
# "stripebackup check" alone asks a running server: libpq's client header (libpq-dev), no server header.
LIBPQ_INCLUDEDIR := $(shell $(PG_CONFIG) --includedir)
CLI_LIBS = -L$(shell $(PG_CONFIG) --libdir) -lpq
SB_ENGINE_CPPFLAGS = -I$(srcdir)/src/engine -I/usr/include/libxml2
sb_layer_cppflags = $(if $(filter src/engine/% test/%,$<),$(SB_ENGINE_CPPFLAGS)) \
	$(if $(filter test/unit/%,$<),-I$(srcdir)/test/unit -I$(UNIT_GEN)) \
	$(if $(filter src/cli/cmd_check.c,$<),-I$(LIBPQ_INCLUDEDIR))
SB_WARNINGS = -Wall -Wextra -Wno-unused-parameter -Werror -Wdeclaration-after-statement \
	-Wmissing-prototypes -Wpointer-arith -Wvla -Wimplicit-fallthrough \
	-Wmissing-format-attribute -Wformat-security
# -fPIC: the library goes into the extension's shared library too, where
# -fvisibility=hidden keeps every engine symbol out of its exports.
SB_CFLAGS = -O2 -g -fPIC -fvisibility=hidden -pthread -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(SB_WARNINGS)
SB_LDFLAGS = -pthread -Wl,-z,relro -Wl,-z,now
SB_CC = $(CC)
SB_FLAVOUR_CFLAGS = $(SB_CFLAGS)
# Each object's headers, as the compiler saw them, go to a .d file beside it
# (-MP: a removed header is no error); they are included at the end.
SB_DEPFLAGS = -MMD -MP

# Objects of SOURCES in build folder DIR: $(call sb_objs,DIR,SOURCES)
sb_objs = $(patsubst %.c,$(1)/%.o,$(2))

define sb_compile
@mkdir -p $(@D)
$(SB_CC) $(SB_CPPFLAGS) $(sb_layer_cppflags) $(SB_FLAVOUR_CFLAGS) $(SB_DEPFLAGS) -c -o $@ $<
endef

define sb_archive
@rm -f $@
$(AR) crs $@ $^
endef

build/%.o: %.c
	$(sb_compile)

ENGINE_OBJS = $(call sb_objs,build,$(ENGINE_SRCS))
CLI_OBJS = $(call sb_objs,build,$(CLI_SRCS))
UNIT_OBJS = $(call sb_objs,build,$(UNIT_SRCS))

$(ENGINE_LIB): $(ENGINE_OBJS)
	$(sb_archive)

# The extension's shared library takes the engine from the static library.
$(shlib): $(ENGINE_LIB)

# An engine function the extension calls but the library lacks stays undefined
# in the shared library and fails only when the server loads it: fail here.
build/shlib-checked: $(shlib)
	@mkdir -p $(@D)
	@if nm -D --undefined-only $< | grep ' sb_'; then \
		echo "$<: engine symbols above are missing from $(ENGINE_LIB)" >&2; exit 1; fi
	@touch $@

all: $(CLI) build/shlib-checked

# The library's exports against the set the sources define (test/exports.sh),
# then the same check on sources and a library made wrong, which must fail.
export-check: $(shlib)
	bash test/exports.sh $(shlib) $(srcdir)
	bash test/exports-selftest.sh $(shlib)

# The engine's folders against the arrows of src/engine/README.md, then the
# check shown failing on a tree made wrong.
layer-check:
	bash test/layers.sh $(srcdir)/src/engine
	bash test/layers.sh --selftest

$(CLI): $(CLI_OBJS) $(ENGINE_LIB)
	$(SB_CC) $(SB_CFLAGS) -o $@ $^ $(SB_LDFLAGS) $(ENGINE_LIBS) $(CLI_LIBS)

# test/unit/syscall_log.c watches (and fails) the engine's syncs, renames and writes;
# test/unit/fake_euid.c makes the engine believe it runs as another user.
UNIT_WRAP = -Wl,--wrap=fsync,--wrap=rename,--wrap=renameat,--wrap=renameat2,--wrap=syncfs,--wrap=pwrite,--wrap=sync_file_range,--wrap=geteuid

# Each unit test is registered once, by its definition: the list of every
# "void\ntest_NAME(void)" in the C files of test/unit (path order, then definition
# order) that test/unit/tests.h declares and main.c runs.  Made on every run
# (a removed file leaves no newer source behind) but written only when it
# changes, so that editing a test recompiles that file alone.  Every
# flavour's unit objects need it (the list of them is at the end).
UNIT_GEN = build/gen
UNIT_LIST = $(UNIT_GEN)/unit_tests.list

$(UNIT_LIST): FORCE
	@mkdir -p $(@D)
	@awk 'prev == "void" && /^test_[a-z0-9_]+\(void\)$$/ { sub(/\(void\)$$/, ""); \
		print "SB_UNIT_TEST(" $$0 ")" } { prev = $$0 }' $(UNIT_SRCS) > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(UNIT): $(UNIT_OBJS) $(ENGINE_LIB)
	$(SB_CC) $(SB_CFLAGS) -o $@ $^ $(SB_LDFLAGS) $(UNIT_WRAP) $(ENGINE_LIBS)

# The extension's objects (PGXS's rule) record their headers the same way.
$(EXTENSION_OBJS): CFLAGS += $(SB_DEPFLAGS)

install: install-cli

# Debian keeps PostgreSQL's programs off PATH (pg_config --bindir), so a link
# in CLI_LINK_DIR lets "stripebackup ..." run as README.md types it.  Empty:
# no link.  A file there that is not a link is left alone; uninstall removes
# the link only if it is ours.
CLI_LINK_DIR ?= /usr/local/bin
CLI_LINK = $(DESTDIR)$(CLI_LINK_DIR)/stripebackup

# The manual page goes where PostgreSQL's own are (pg_config --mandir), so
# that "man stripebackup" finds it beside pg_ctl(1) wherever those are read.
MAN_PAGE = docs/stripebackup.1

install-cli: $(CLI)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(CLI) '$(DESTDIR)$(bindir)/stripebackup'
	$(MKDIR_P) '$(DESTDIR)$(mandir)/man1'
	$(INSTALL_DATA) $(srcdir)/$(MAN_PAGE) '$(DESTDIR)$(mandir)/man1/stripebackup.1'
ifneq ($(CLI_LINK_DIR),)
	@if [ -e '$(CLI_LINK)' ] && [ ! -L '$(CLI_LINK)' ]; then \
		echo "warning: '$(CLI_LINK)' exists and is not a link: left alone" >&2; \
	else \
		$(MKDIR_P) '$(DESTDIR)$(CLI_LINK_DIR)' && \
		ln -sfn '$(bindir)/stripebackup' '$(CLI_LINK)' && \
		echo "linked '$(CLI_LINK)' to '$(bindir)/stripebackup'"; \
	fi
endif

uninstall: uninstall-cli

uninstall-cli:
	rm -f '$(DESTDIR)$(bindir)/stripebackup' '$(DESTDIR)$(mandir)/man1/stripebackup.1'
ifneq ($(CLI_LINK_DIR),)
	@if [ -L '$(CLI_LINK)' ] && [ "$$(readlink '$(CLI_LINK)')" = '$(bindir)/stripebackup' ]; then \
		rm -f '$(CLI_LINK)'; \
	fi
endif

# The unit tests of the S3 client need an S3 server: test/s3/with-s3.sh starts
# one (s3rver) unless SB_TEST_S3_ENDPOINT names one already.
WITH_S3 = $(if $(SB_TEST_S3_ENDPOINT),,bash test/s3/with-s3.sh)

unit: $(UNIT)
	$(WITH_S3) ./$(UNIT)

test:
	bash test/run-all.sh

quickstart:
	bash scripts/quickstart.sh

# Figures beside pg_basebackup, pgBackRest and fio (not a test): make bench SCALE=60 RUNS=3;
# then, where root may slow devices (cgroup v1 blkio), the device scenarios of bench-devices
DEVICES_ARGS = $(or $(DEVICES_SCALE),20) $(or $(SLOW),30) $(or $(FAST),120) $(or $(SOURCE),50)
BLKIO_LIMIT = /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
bench:
	bash test/bench/bench.sh $(or $(SCALE),60) $(or $(RUNS),3) $(or $(BIG_SCALE),0)
	@if [ "$$(id -u)" -eq 0 ] && [ -w $(BLKIO_LIMIT) ]; then bash test/bench/devices.sh $(DEVICES_ARGS); \
	else echo "(the device scenarios need root and cgroup v1 blkio throttling: sudo make bench-devices)"; fi

# One table against 3,000 partitions alone, uncompressed backups: make bench-partitions SCALE=60 RUNS=3
bench-partitions:
	BENCH_ONLY=partitions bash test/bench/bench.sh $(or $(SCALE),60) $(or $(RUNS),3)

# The WAL archive beside pgBackRest and basic_archive: make bench-wal SEGMENTS=64 RUNS=3 LAG_SECONDS=300
bench-wal:
	bash test/bench/wal_archive.sh $(or $(SEGMENTS),64) $(or $(RUNS),3) $(or $(LAG_SECONDS),300)

# Devices slowed by the kernel (loop devices, blkio throttling; needs root): make bench-devices
bench-devices:
	bash test/bench/devices.sh $(or $(SCALE),20) $(or $(SLOW),30) $(or $(FAST),120) $(or $(SOURCE),50)

# Trees of many small files through the command: make bench-files COUNTS=100000,300000,1000000
comma := ,

bench-files:
	bash test/bench/many_files.sh $(or $(COUNTS),100000$(comma)300000$(comma)1000000) $(or $(SIZE),1024)

# A cluster of many relations, online, beside pg_basebackup and pgBackRest: make bench-relations RELATIONS=100000
bench-relations:
	bash test/bench/many_relations.sh $(or $(RELATIONS),100000)

# Clusters of growing size, online backup and restore: make bench-sweep SIZES=1,4,16 (GB)
bench-sweep:
	bash test/bench/size_sweep.sh $(or $(SIZES),1$(comma)4$(comma)16)

# Incremental backups and a chain's restore beside pgBackRest: make bench-incr SCALE=270
bench-incr:
	bash test/bench/incremental.sh $(or $(SCALE),270)

# Incremental backups from WAL summaries on PostgreSQL 18 beside pg_basebackup's
# (builds 18 with scripts/build-postgres.sh; root): make bench-summary SCALE=200 RUNS=3
bench-summary:
	bash test/bench/summary_incremental.sh $(or $(SCALE),200) $(or $(RUNS),3)

# Stale copies refreshed in place beside pgBackRest --delta: make bench-delta SCALE="40 200" (FRAME_SIZE=16kB, ROUNDS=3)
bench-delta:
	bash test/bench/delta.sh "$(or $(SCALE),40 200)"

# The cost of encryption: make bench-encryption SCALE=200 ROUNDS=5
bench-encryption:
	bash test/bench/encryption.sh $(or $(SCALE),200) $(or $(ROUNDS),5)

# Redundancy across the stripes on throttled devices (needs root): make bench-redundancy SCALE=20 SEGMENTS=24
bench-redundancy:
	bash test/bench/redundancy.sh $(or $(SCALE),20) $(or $(SEGMENTS),24)

# Object storage: make bench-s3 SCALE=100 ROUNDS=3
bench-s3:
	bash test/bench/object_storage.sh $(or $(SCALE),100) $(or $(ROUNDS),3)

.PHONY: export-check layer-check install-cli uninstall-cli unit test quickstart bench bench-partitions bench-wal bench-devices bench-files bench-relations bench-sweep bench-incr bench-summary \
	bench-delta bench-encryption bench-s3

# ---------- sanitizers ----------
#
# A second copy of the engine and the unit tests, built under build/asan/ with
# AddressSanitizer (leaks included) and UBSan, any report fatal.  The same
# warnings as the normal build, at -O1 for usable stack traces (and without
# _FORTIFY_SOURCE, which ASan replaces).

SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_DIR = build/asan
ASAN_CFLAGS = -O1 -g -pthread $(SANITIZE) $(SB_WARNINGS)
ASAN_LIB = $(ASAN_DIR)/libsbengine.a
UNIT_ASAN = $(ASAN_DIR)/unit_tests
# Reports end the run with a stack trace; leaks are reported at exit.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# private: not passed on to prerequisites (all under build/asan/ anyway).
$(ASAN_DIR)/%: private SB_FLAVOUR_CFLAGS = $(ASAN_CFLAGS)

$(ASAN_DIR)/%.o: %.c
	$(sb_compile)

$(ASAN_LIB): $(call sb_objs,$(ASAN_DIR),$(ENGINE_SRCS))
	$(sb_archive)

$(UNIT_ASAN): $(call sb_objs,$(ASAN_DIR),$(UNIT_SRCS)) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(UNIT_WRAP) $(ENGINE_LIBS)

unit-asan: $(UNIT_ASAN)
	$(SANITIZER_ENV) $(WITH_S3) ./$(UNIT_ASAN)

# ---------- coverage ----------
#
# The engine and the unit tests once more, under build/coverage/ with gcc's
# --coverage at -O0 (so that lines map to code).  The tests link the engine's
# objects, not the library: a file no test calls then counts as not run
# instead of being left out.  test/coverage.sh runs the tests with both I/O
# methods and prints lines and branches run per engine file and per subsystem
# (gcovr; the subsystems, their files and floors: test/coverage-subsystems);
# coverage-check fails when less than COVERAGE_MIN percent of the engine's
# lines ran, or less than its floor of a subsystem's.

COVERAGE_DIR = build/coverage
COVERAGE_CFLAGS = -O0 -g -pthread --coverage $(SB_WARNINGS)
COVERAGE_MIN ?= 90
UNIT_COVERAGE = $(COVERAGE_DIR)/unit_tests

$(COVERAGE_DIR)/%: private SB_FLAVOUR_CFLAGS = $(COVERAGE_CFLAGS)

$(COVERAGE_DIR)/%.o: %.c
	$(sb_compile)

$(UNIT_COVERAGE): $(call sb_objs,$(COVERAGE_DIR),$(UNIT_SRCS) $(ENGINE_SRCS))
	$(CC) $(COVERAGE_CFLAGS) -o $@ $^ $(UNIT_WRAP) $(ENGINE_LIBS)

coverage: $(UNIT_COVERAGE)
	$(WITH_S3) bash test/coverage.sh $(COVERAGE_DIR)

coverage-check: $(UNIT_COVERAGE)
	bash test/coverage-selftest.sh
	$(WITH_S3) bash test/coverage.sh $(COVERAGE_DIR) $(COVERAGE_MIN)

.PHONY: coverage coverage-check

# ---------- fuzzing (test/fuzz/README.md) ----------
#
# libFuzzer targets, built with clang under build/fuzz/ from their own copy
# of the engine (instrumented for coverage, with ASan and UBSan).  The normal
# build and CI need no clang: "make fuzz-replay" runs the kept corpus through
# the same targets built with gcc and the sanitizers, without libFuzzer.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_DIR = build/fuzz
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -pthread $(FUZZ_SANITIZE) $(SB_WARNINGS)
FUZZ_LIB = $(FUZZ_DIR)/libsbengine.a
FUZZ_TARGETS = $(FUZZ_DIR)/fuzz_manifest $(FUZZ_DIR)/fuzz_stripe $(FUZZ_DIR)/fuzz_wal $(FUZZ_DIR)/fuzz_walrec
REPLAY_TARGETS = $(ASAN_DIR)/replay_manifest $(ASAN_DIR)/replay_stripe $(ASAN_DIR)/replay_wal \
	$(ASAN_DIR)/replay_walrec

# Every object instrumented for libFuzzer; only the link adds its main().
$(FUZZ_DIR)/%: private SB_CC = $(FUZZ_CC)
$(FUZZ_DIR)/%: private SB_FLAVOUR_CFLAGS = $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link

$(FUZZ_DIR)/%.o: %.c
	$(sb_compile)

$(FUZZ_LIB): $(call sb_objs,$(FUZZ_DIR),$(ENGINE_SRCS))
	$(sb_archive)

$(FUZZ_DIR)/fuzz_manifest: $(call sb_objs,$(FUZZ_DIR),test/fuzz/fuzz_manifest.c) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(ENGINE_LIBS)

$(FUZZ_DIR)/fuzz_stripe: $(call sb_objs,$(FUZZ_DIR),test/fuzz/fuzz_stripe.c test/fuzz/fixture.c) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(ENGINE_LIBS)

$(FUZZ_DIR)/fuzz_wal: $(call sb_objs,$(FUZZ_DIR),test/fuzz/fuzz_wal.c test/fuzz/fixture.c) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(ENGINE_LIBS)

$(FUZZ_DIR)/fuzz_walrec: $(call sb_objs,$(FUZZ_DIR),test/fuzz/fuzz_walrec.c) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(ENGINE_LIBS)

# The seed generator: a plain program on the normal engine library.
build/make_seeds: $(call sb_objs,build,test/fuzz/make_seeds.c test/fuzz/fixture.c test/unit/wal_gen.c) $(ENGINE_LIB)
	$(SB_CC) $(SB_CFLAGS) -o $@ $^ $(SB_LDFLAGS) $(ENGINE_LIBS)

# The targets without libFuzzer: test/fuzz/replay.c feeds them files.
$(ASAN_DIR)/replay_manifest: $(call sb_objs,$(ASAN_DIR),test/fuzz/replay.c test/fuzz/fuzz_manifest.c) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(ENGINE_LIBS)

$(ASAN_DIR)/replay_stripe: $(call sb_objs,$(ASAN_DIR),test/fuzz/replay.c test/fuzz/fuzz_stripe.c test/fuzz/fixture.c) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(ENGINE_LIBS)

$(ASAN_DIR)/replay_wal: $(call sb_objs,$(ASAN_DIR),test/fuzz/replay.c test/fuzz/fuzz_wal.c test/fuzz/fixture.c) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(ENGINE_LIBS)

$(ASAN_DIR)/replay_walrec: $(call sb_objs,$(ASAN_DIR),test/fuzz/replay.c test/fuzz/fuzz_walrec.c) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(ENGINE_LIBS)

fuzz: $(FUZZ_TARGETS)

fuzz-run: $(FUZZ_TARGETS)
	bash test/fuzz/fuzz.sh run $(FUZZ_SECONDS)

fuzz-merge: $(FUZZ_TARGETS)
	bash test/fuzz/fuzz.sh merge

fuzz-seeds: build/make_seeds
	./build/make_seeds test/fuzz/corpus

fuzz-replay: $(REPLAY_TARGETS)
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_manifest test/fuzz/corpus/manifest test/fuzz/regress/manifest
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_stripe test/fuzz/corpus/stripe test/fuzz/regress/stripe
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_wal test/fuzz/corpus/wal test/fuzz/regress/wal
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_walrec test/fuzz/corpus/walrec

.PHONY: unit-asan fuzz fuzz-run fuzz-merge fuzz-seeds fuzz-replay

FORCE:

.PHONY: FORCE

# Every flavour's unit-test objects include the generated list of tests.
$(foreach dir,build $(ASAN_DIR) $(COVERAGE_DIR),$(call sb_objs,$(dir),$(UNIT_SRCS))): $(UNIT_LIST)

# The header dependencies recorded by every build above, at any depth (none before a first build).
-include $(wildcard src/extension/*.d) $(shell find build -name '*.d' 2>/dev/null)
