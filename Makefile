# stripebackup: PGXS build of the extension library, the engine and the
# stripebackup command.
#
#   make                 build everything
#   make install         install the library, SQL files and the command
#   make test            install dependencies, build, install, run every test
#   make quickstart      build, then back up and restore a throwaway cluster
#   make unit            engine unit tests only (no PostgreSQL needed)
#   make bench           throughput beside pg_basebackup, pgBackRest and fio
#   make unit-asan       the same under AddressSanitizer and UBSan (gcc), as CI runs them
#   make fuzz            build the libFuzzer targets (clang: scripts/install-deps.sh --fuzz)
#   make fuzz-run        run both fuzz targets at once, FUZZ_SECONDS each (default 600)
#   make fuzz-merge      minimize what fuzz-run found into test/fuzz/corpus
#   make fuzz-seeds      regenerate the seed corpus from real backups
#   make fuzz-replay     run the fuzz corpus once through the targets, under ASan/UBSan (gcc)
#   (test/fuzz/README.md says more)

EXTENSION = stripebackup
MODULE_big = stripebackup
DATA = sql/stripebackup--0.1.sql
PGFILEDESC = "stripebackup - weighted-stripe online backups"

ENGINE_SRCS = $(sort $(wildcard src/engine/*.c))
ENGINE_OBJS = $(ENGINE_SRCS:.c=.o)
EXTENSION_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/extension/*.c)))
CLI_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/cli/*.c)))
UNIT_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard test/unit/*.c)))

OBJS = $(EXTENSION_OBJS) $(ENGINE_OBJS)

ENGINE_LIBS = -lzstd -luring -lxxhash -lcjson -lisal -lcrypto -lpthread -lm
SHLIB_LINK = $(ENGINE_LIBS)
PG_CPPFLAGS = -I$(srcdir)/include -I$(srcdir)/src/engine
PG_CFLAGS = -Werror -pthread

# pg_regress (sql/, expected/) on a throwaway instance: make installcheck
REGRESS = stripebackup_args
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_regress

CLI = src/cli/stripebackup
UNIT = test/unit/unit_tests

EXTRA_CLEAN = $(CLI) $(CLI_OBJS) $(UNIT) $(UNIT_OBJS) tmp_check tmp_check_regress build

# Our objects run threads: no LLVM bitcode for the JIT.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The engine, the command and the tests hold themselves to -Wextra as well.
$(ENGINE_OBJS) $(CLI_OBJS) $(UNIT_OBJS): CFLAGS += -Wextra -Wno-unused-parameter

all: $(CLI)

$(CLI): $(CLI_OBJS) $(ENGINE_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(ENGINE_LIBS)

# test_durability.c watches (and fails) the engine's syncs and renames.
UNIT_WRAP = -Wl,--wrap=fsync,--wrap=rename,--wrap=renameat,--wrap=syncfs,--wrap=pwrite

$(UNIT): $(UNIT_OBJS) $(ENGINE_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(UNIT_WRAP) $(ENGINE_LIBS)

# Every object depends on the headers (few, and small: rebuild all when one changes).
$(ENGINE_OBJS) $(EXTENSION_OBJS) $(CLI_OBJS) $(UNIT_OBJS): $(wildcard include/stripebackup/*.h src/engine/*.h src/extension/*.h src/cli/*.h test/unit/*.h)

install: install-cli

install-cli: $(CLI)
	$(INSTALL_PROGRAM) $(CLI) '$(DESTDIR)$(bindir)/stripebackup'

uninstall: uninstall-cli

uninstall-cli:
	rm -f '$(DESTDIR)$(bindir)/stripebackup'

unit: $(UNIT)
	./$(UNIT)

test:
	bash test/run-all.sh

quickstart:
	bash scripts/quickstart.sh

# Figures beside pg_basebackup, pgBackRest and fio (not a test): make bench SCALE=60 RUNS=3
bench:
	bash test/bench/bench.sh $(or $(SCALE),60) $(or $(RUNS),3) $(or $(BIG_SCALE),0)

.PHONY: install-cli uninstall-cli unit test quickstart bench

# ---------- sanitizers ----------
#
# A second copy of the engine and the unit tests, built under build/asan/ with
# AddressSanitizer (leaks included) and UBSan, any report fatal.  The same
# flags as the normal build otherwise, at -O1 for usable stack traces.

SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_DIR = build/asan
ASAN_CFLAGS = $(CFLAGS) -Wextra -Wno-unused-parameter -O1 $(SANITIZE)
ASAN_ENGINE_OBJS = $(patsubst src/engine/%.c,$(ASAN_DIR)/engine/%.o,$(ENGINE_SRCS))
ASAN_UNIT_OBJS = $(patsubst test/unit/%.c,$(ASAN_DIR)/unit/%.o,$(sort $(wildcard test/unit/*.c)))
UNIT_ASAN = $(ASAN_DIR)/unit_tests
# Reports end the run with a stack trace; leaks are reported at exit.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ENGINE_HEADERS = $(wildcard include/stripebackup/*.h src/engine/*.h)

$(ASAN_DIR)/engine/%.o: src/engine/%.c $(ENGINE_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN_DIR)/unit/%.o: test/unit/%.c $(ENGINE_HEADERS) $(wildcard test/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ASAN_CFLAGS) -c -o $@ $<

$(UNIT_ASAN): $(ASAN_UNIT_OBJS) $(ASAN_ENGINE_OBJS)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDFLAGS) $(UNIT_WRAP) $(ENGINE_LIBS)

unit-asan: $(UNIT_ASAN)
	$(SANITIZER_ENV) ./$(UNIT_ASAN)

# ---------- fuzzing (test/fuzz/README.md) ----------
#
# libFuzzer targets, built with clang under build/fuzz/ from their own copy
# of the engine (instrumented for coverage, with ASan and UBSan).  The normal
# build and CI need no clang: "make fuzz-replay" runs the kept corpus through
# the same targets built with gcc and the sanitizers, without libFuzzer.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_DIR = build/fuzz
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -pthread -Wall -Wextra -Wno-unused-parameter \
	-Wdeclaration-after-statement -Wmissing-prototypes -Werror \
	-D_GNU_SOURCE -I$(srcdir)/include -I$(srcdir)/src/engine
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_ENGINE_OBJS = $(patsubst src/engine/%.c,$(FUZZ_DIR)/engine/%.o,$(ENGINE_SRCS))
FUZZ_TARGETS = $(FUZZ_DIR)/fuzz_manifest $(FUZZ_DIR)/fuzz_stripe
FUZZ_HEADERS = $(ENGINE_HEADERS) test/fuzz/fixture.h
REPLAY_TARGETS = $(ASAN_DIR)/replay_manifest $(ASAN_DIR)/replay_stripe

$(FUZZ_DIR)/engine/%.o: src/engine/%.c $(ENGINE_HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SANITIZE) -c -o $@ $<

$(FUZZ_DIR)/fuzz_manifest: test/fuzz/fuzz_manifest.c $(FUZZ_ENGINE_OBJS) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SANITIZE) -o $@ \
		$(filter %.c %.o,$^) $(ENGINE_LIBS)

$(FUZZ_DIR)/fuzz_stripe: test/fuzz/fuzz_stripe.c test/fuzz/fixture.c $(FUZZ_ENGINE_OBJS) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SANITIZE) -o $@ \
		$(filter %.c %.o,$^) $(ENGINE_LIBS)

# The seed generator: a plain program on the normal engine objects.
$(FUZZ_DIR)/make_seeds: test/fuzz/make_seeds.c test/fuzz/fixture.c $(ENGINE_OBJS) $(FUZZ_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wextra -Wno-unused-parameter -o $@ \
		$(filter %.c %.o,$^) $(LDFLAGS) $(ENGINE_LIBS)

# The targets without libFuzzer: test/fuzz/replay.c feeds them files.
$(ASAN_DIR)/replay_manifest: test/fuzz/replay.c test/fuzz/fuzz_manifest.c $(ASAN_ENGINE_OBJS) $(FUZZ_HEADERS)
	$(CC) $(CPPFLAGS) $(ASAN_CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(ENGINE_LIBS)

$(ASAN_DIR)/replay_stripe: test/fuzz/replay.c test/fuzz/fuzz_stripe.c test/fuzz/fixture.c $(ASAN_ENGINE_OBJS) $(FUZZ_HEADERS)
	$(CC) $(CPPFLAGS) $(ASAN_CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(ENGINE_LIBS)

fuzz: $(FUZZ_TARGETS)

fuzz-run: $(FUZZ_TARGETS)
	bash test/fuzz/fuzz.sh run $(FUZZ_SECONDS)

fuzz-merge: $(FUZZ_TARGETS)
	bash test/fuzz/fuzz.sh merge

fuzz-seeds: $(FUZZ_DIR)/make_seeds
	./$(FUZZ_DIR)/make_seeds test/fuzz/corpus

fuzz-replay: $(REPLAY_TARGETS)
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_manifest test/fuzz/corpus/manifest test/fuzz/regress/manifest
	$(SANITIZER_ENV) ./$(ASAN_DIR)/replay_stripe test/fuzz/corpus/stripe test/fuzz/regress/stripe

.PHONY: unit-asan fuzz fuzz-run fuzz-merge fuzz-seeds fuzz-replay
