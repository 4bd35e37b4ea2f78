/*
 * test_pgrecovery_values.c
 *		Hostile values through the settings a restore writes into
 *		postgresql.auto.conf (sb_pgrecovery.h), read back by PostgreSQL's
 *		own rules: a model of its configuration parser's string rules here,
 *		and PostgreSQL itself ("postgres -D DIR -C NAME", which reads the
 *		files and prints a setting) when SB_TEST_POSTGRES names the server
 *		program and the test does not run as root (PostgreSQL refuses root).
 *
 * Every value must come back byte for byte, and restore_command, run by a
 * shell as PostgreSQL runs it, must run the one program with the words it
 * was given and nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "stripebackup/sb_pgrecovery.h"
#include "tests.h"

#define VALUE_MAX 4096

/* Values that must come back as written: quotes, backslashes, escapes written out, shell words. */
static const char *const hostile[] = {
	"p'w",
	"host=db password='p\\'w'",
	"a\\",
	"\\\\",
	"\\047;touch /tmp/PWNED;\\047",
	"x\\' restore_command = 'touch /tmp/PWNED",
	"\\n as two characters, \\t \\b \\r \\f",
	"\\x41 \\101 \\0",
	"100% %f %p %%",
	"$HOME ${PATH} `id` $(id)",
	"#not a comment",
	"a = b",
	"''",
	"'",
	"ünïcødé ✓ 日本",
};

/*
 * The value of the string token at *P (just past its opening quote), as
 * PostgreSQL's configuration parser (guc-file.l) takes it: '' is a quote;
 * a backslash escapes the next character, \b \f \n \r \t are those control
 * characters and \ooo (one to three octal digits) a byte.  False when the
 * string does not end on the line, as the parser would refuse it.
 */
static bool
model_unquote(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	size_t		j = 0;

	for (; *s != '\0' && *s != '\n' && j + 1 < cap; s++)
	{
		if (*s == '\'' && s[1] == '\'')
			out[j++] = *s++;
		else if (*s == '\'')
		{
			out[j] = '\0';
			*p = s + 1;
			return true;
		}
		else if (*s == '\\' && s[1] != '\0' && s[1] != '\n')
		{
			static const char from[] = "bfnrt";
			static const char to[] = "\b\f\n\r\t";
			const char *c = strchr(from, *++s);

			if (c != NULL)
				out[j++] = to[c - from];
			else if (*s >= '0' && *s <= '7')
			{
				int			v = 0;
				int			k;

				for (k = 0; k < 3 && *s >= '0' && *s <= '7'; k++)
					v = v * 8 + (*s++ - '0');
				s--;
				out[j++] = (char) v;
			}
			else
				out[j++] = *s;
		}
		else
			out[j++] = *s;
	}
	return false;
}

/*
 * The value TEXT gives NAME, by the model: the last "NAME = '...'" line
 * wins, as in PostgreSQL; what follows the string on its line must be
 * nothing (else the file has a syntax error).  False when absent or unparsable.
 */
static bool
model_read(const char *text, const char *name, char *out, size_t cap)
{
	char		start[128];
	const char *line;
	bool		found = false;

	snprintf(start, sizeof(start), "%s = '", name);
	for (line = text; line != NULL && *line != '\0'; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
	{
		const char *p = line + strlen(start);

		if (strncmp(line, start, strlen(start)) != 0)
			continue;
		if (!model_unquote(&p, out, cap) || (*p != '\n' && *p != '\0'))
			return false;
		found = true;
	}
	return found;
}

/* A data directory PostgreSQL will read settings from: an empty postgresql.conf, and TEXT. */
static void
write_conf(const char *dir, const char *text)
{
	char		path[PATH_MAX];
	FILE	   *f;

	fclose(fopen(th_path(path, "%s/postgresql.conf", dir), "w"));
	f = fopen(th_path(path, "%s/postgresql.auto.conf", dir), "w");
	fputs(text, f);
	fclose(f);
}

/* Whether the real server can be asked: its program named, and not root. */
static const char *
postgres_program(void)
{
	const char *program = getenv("SB_TEST_POSTGRES");

	return program != NULL && program[0] != '\0' && geteuid() != 0 ? program : NULL;
}

/* The value PostgreSQL reads for NAME from DIR (postgres -C), its newline dropped; false if it fails. */
static bool
postgres_read(const char *program, const char *dir, const char *name, char *out, size_t cap)
{
	char		command[2 * PATH_MAX];
	FILE	   *p;
	size_t		n;

	snprintf(command, sizeof(command), "'%s' -D '%s' -C %s 2>/dev/null", program, dir, name);
	if ((p = popen(command, "r")) == NULL)
		return false;
	n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	if (pclose(p) != 0 || n == 0 || out[n - 1] != '\n')
		return false;
	out[n - 1] = '\0';
	return true;
}

/* TEXT's NAME read back by the model and, where it can be asked, by PostgreSQL: both give WANT. */
static void
check_read_back(const char *dir, const char *text, const char *name, const char *want,
				const char *what)
{
	char		got[VALUE_MAX * 2];
	const char *program = postgres_program();

	if (!ok(model_read(text, name, got, sizeof(got)), "%s: the file parses (%s)", what, name))
		diag("%s", text);
	is_str(got, want, "%s: %s comes back unchanged by PostgreSQL's rules", what, name);
	if (program == NULL)
		return;
	write_conf(dir, text);
	got[0] = '\0';
	ok(postgres_read(program, dir, name, got, sizeof(got)), "%s: PostgreSQL reads the file", what);
	is_str(got, want, "%s: PostgreSQL reads %s back unchanged", what, name);
}

static const char *
settings_text(const SbRecoveryTarget *t, const SbStandby *standby, const SbRecoveryArchive *a,
			  char *buf, size_t cap)
{
	SbRestoreFile files[2];
	uint32_t	n = 0;
	SbError		err;

	buf[0] = '\0';
	if (!ok(sb_recovery_files(t, standby, a, files, &n, &err) && n == 2, "the settings are written"))
		th_diag_error("writing them", &err);
	else
		snprintf(buf, cap, "%s", files[0].text);
	sb_recovery_files_free(files, n);
	return buf;
}

void
test_pgrecovery_values(void)
{
	static const char *const dests[] = {"/srv/bk"};
	SbRecoveryArchive a = {"/usr/lib/postgresql/15/bin/stripebackup", dests, 1, 7300000000000000001ULL, 8, 0, NULL, NULL};
	char		dir[PATH_MAX];
	char		text[16384];
	size_t		i;

	th_begin("test_pgrecovery_values: hostile values read back by PostgreSQL's rules");
	if (postgres_program() == NULL)
		diag("SB_TEST_POSTGRES unset, or running as root: the model of PostgreSQL's parser only");
	th_tempdir(dir, "pgconf");
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
	{
		SbStandby	s = {true, hostile[i], NULL};
		SbRecoveryTarget name = {SB_RECOVERY_NAME, hostile[i], true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};

		check_read_back(dir, settings_text(&(SbRecoveryTarget) {SB_RECOVERY_NONE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0},
										   &s, &a, text, sizeof(text)),
						"primary_conninfo", hostile[i], hostile[i]);
		if (strlen(hostile[i]) <= 63)
			check_read_back(dir, settings_text(&name, NULL, &a, text, sizeof(text)),
							"recovery_target_name", hostile[i], hostile[i]);
	}
	th_rmtree(dir);
}

/*
 * restore_command with an archive folder named to break out of the
 * setting ("\047" is a quote to PostgreSQL's parser), read back and run by
 * a shell as PostgreSQL runs it (with /bin/echo as the program): one
 * program, the folder as one word, and no marker file.
 */
void
test_pgrecovery_restore_command_words(void)
{
	char		dir[PATH_MAX];
	char		marker[PATH_MAX];
	char		dest[PATH_MAX];
	char		quoted[2 * PATH_MAX];
	char		text[16384];
	char		command[16384];
	char		expected[6 * PATH_MAX];
	char		shell[16384 + 64];
	char		echoed[16384];
	const char *dests[1];
	SbRecoveryArchive a = {"/bin/echo", dests, 1, 7300000000000000001ULL, 8, 0, NULL, NULL};
	SbRecoveryTarget t = {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	struct stat st;
	FILE	   *p;
	size_t		n;

	th_begin("test_pgrecovery_restore_command_words: a folder name cannot become a shell command");
	th_tempdir(dir, "pgconf-shell");
	th_path(marker, "%s/PWNED", dir);
	th_path(dest, "%s/bkx\\047;touch %s;\\047 $(touch %s) `touch %s` 100%%", dir, marker, marker, marker);
	dests[0] = dest;
	a.key_file = dest;			/* a key file's path goes in the same way */
	settings_text(&t, NULL, &a, text, sizeof(text));
	n = 0;
	for (const char *c = dest; *c != '\0'; c++)
		if ((quoted[n++] = *c) == '%')
			quoted[n++] = '%';
	quoted[n] = '\0';
	snprintf(expected, sizeof(expected), "'/bin/echo' wal-get --archive '%s' "
			 "--system-identifier 7300000000000000001 --encryption-key-file '%s' --prefetch 8 %%f %%p",
			 quoted, quoted);
	check_read_back(dir, text, "restore_command", expected, "an archive folder named to escape");
	ok(model_read(text, "restore_command", command, sizeof(command)), "restore_command read back");
	/* as PostgreSQL substitutes %f, %p and %% before the shell sees the command */
	n = 0;
	for (const char *c = command; *c != '\0' && n + 32 < sizeof(shell); c++)
	{
		if (c[0] == '%' && c[1] == 'f')
			n += (size_t) snprintf(shell + n, sizeof(shell) - n, "000000010000000000000001"), c++;
		else if (c[0] == '%' && c[1] == 'p')
			n += (size_t) snprintf(shell + n, sizeof(shell) - n, "pg_wal/RECOVERYXLOG"), c++;
		else if (c[0] == '%' && c[1] == '%')
			shell[n++] = '%', c++;
		else
			shell[n++] = *c;
	}
	shell[n] = '\0';
	p = popen(shell, "r");
	n = p ? fread(echoed, 1, sizeof(echoed) - 1, p) : 0;
	echoed[n] = '\0';
	ok(p != NULL && pclose(p) == 0, "the shell runs it");
	snprintf(expected, sizeof(expected),
			 "wal-get --archive %s --system-identifier 7300000000000000001 --encryption-key-file %s "
			 "--prefetch 8 000000010000000000000001 pg_wal/RECOVERYXLOG\n", dest, dest);
	is_str(echoed, expected, "the one program gets the folder as one word, unchanged");
	ok(stat(marker, &st) != 0, "and nothing else ran (no marker file)");
	th_rmtree(dir);
}
