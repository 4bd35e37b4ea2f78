# stripebackup: PGXS build of the extension library, the engine and the
# stripebackup command.
#
#   make                 build everything
#   make install         install the library, SQL files and the command
#   make test            install dependencies, build, install, run every test
#   make quickstart      build, then back up and restore a throwaway cluster
#   make unit            engine unit tests only (no PostgreSQL needed)

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

ENGINE_LIBS = -lzstd -luring -lxxhash -lcjson -lisal -lpthread
SHLIB_LINK = $(ENGINE_LIBS)
PG_CPPFLAGS = -I$(srcdir)/include -I$(srcdir)/src/engine
PG_CFLAGS = -Werror -pthread

# pg_regress (sql/, expected/) on a throwaway instance: make installcheck
REGRESS = stripebackup_args
REGRESS_OPTS = --temp-config=$(srcdir)/test/regress.conf --temp-instance=./tmp_check_regress

CLI = src/cli/stripebackup
UNIT = test/unit/unit_tests

EXTRA_CLEAN = $(CLI) $(CLI_OBJS) $(UNIT) $(UNIT_OBJS) tmp_check tmp_check_regress

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

$(UNIT): $(UNIT_OBJS) $(ENGINE_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(ENGINE_LIBS)

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

.PHONY: install-cli uninstall-cli unit test quickstart
