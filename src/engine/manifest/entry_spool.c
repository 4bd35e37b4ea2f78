/*
 * entry_spool.c
 *		A manifest's entries in an unlinked file, as binary records (see
 *		entry_spool.h): a fixed header, then the path, the link target, the
 *		file stamps when the spool keeps them, and the extents.  The records
 *		never leave the process, so the header is the struct as this build
 *		lays it out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest/entry_spool.h"
#include "util/fsutil.h"

#define BLOCK ((size_t) 256 << 10)

typedef struct Record
{
	uint32_t	path_len;
	uint32_t	link_len;		/* 0 when there is no link target */
	uint32_t	nextents;
	uint32_t	crc32c;
	int64_t		mtime;
	uint64_t	size;
	uint64_t	stream_offset;
	uint64_t	stream_length;
	uint16_t	mode;
	uint8_t		type;
	uint8_t		flags;
	uint16_t	id_len;			/* with FLAG_ID: the file_id's bytes */
	uint16_t	times_len;		/* with FLAG_TIMES: the file_times' bytes */
} Record;

_Static_assert(sizeof(Record) % 8 == 0, "spool records stay 8-byte aligned");

#define FLAG_SPARSE 1
#define FLAG_INCREMENTAL 2
#define FLAG_LINK 4
#define FLAG_ID 8
#define FLAG_TIMES 16

/* A record read at random (sb_entry_spool_read_at) is read this much at a time. */
#define AT_READ 512

struct SbEntrySpool
{
	int			fd;
	uint64_t	count;
	char	   *buf;			/* appending: what is not written yet;
								 * reading: what was read and not yet taken */
	size_t		cap;
	size_t		fill;
	size_t		pos;			/* reading: the next record in buf */
	uint64_t	file_pos;		/* reading: the next byte of the file to read */
	uint64_t	written;		/* bytes in the file */
	bool		reading;
	bool		stamps;			/* keep the entries' file stamps */
	char	   *at_buf;			/* the record read last by read_at */
	size_t		at_cap;
};

SbEntrySpool *
sb_entry_spool_new(const char *dir, bool stamps, SbError *err)
{
	SbEntrySpool *s = sb_alloc(sizeof(SbEntrySpool), err);

	if (s == NULL)
		return NULL;
	s->stamps = stamps;
	s->fd = sb_open_unlinked(dir, "the manifest's entries", err);
	s->buf = s->fd >= 0 ? sb_alloc(BLOCK, err) : NULL;
	s->cap = BLOCK;
	if (s->buf == NULL)
	{
		sb_entry_spool_free(s);
		return NULL;
	}
	return s;
}

static bool
flush(SbEntrySpool *s, SbError *err)
{
	if (s->fill > 0 && !sb_write_all(s->fd, s->buf, s->fill, "the manifest's entries", err))
		return false;
	s->written += s->fill;
	s->fill = 0;
	return true;
}

/* Append LEN bytes at DATA (through the buffer, or straight on when larger). */
static bool
append(SbEntrySpool *s, const void *data, size_t len, SbError *err)
{
	if (len == 0)
		return true;
	if (s->fill + len > s->cap && !flush(s, err))
		return false;
	if (len > s->cap)
	{
		if (!sb_write_all(s->fd, data, len, "the manifest's entries", err))
			return false;
		s->written += len;
		return true;
	}
	memcpy(s->buf + s->fill, data, len);
	s->fill += len;
	return true;
}

/* Bytes of a record's header and strings (each with its NUL), before the padding to 8 bytes. */
static size_t
strings_used(const Record *r)
{
	return sizeof(Record) + r->path_len + 1 + ((r->flags & FLAG_LINK) ? r->link_len + 1 : 0) +
		((r->flags & FLAG_ID) ? r->id_len + 1 : 0) + ((r->flags & FLAG_TIMES) ? r->times_len + 1 : 0);
}

/* Where a record's extents start: its strings padded to 8 bytes. */
static size_t
strings_end(const Record *r)
{
	return (strings_used(r) + 7) & ~(size_t) 7;
}

static size_t
record_size(const Record *r)
{
	return strings_end(r) + (size_t) r->nextents * sizeof(SbExtent);
}

bool
sb_entry_spool_add(SbEntrySpool *s, const SbEntry *e, SbError *err)
{
	static const char zeros[8];
	const char *id = s->stamps ? e->file_id : NULL;
	const char *times = s->stamps ? e->file_times : NULL;
	Record		r;

	if (s->reading)
		return sb_error_set(err, SB_EINVAL, "internal error: an entry added to a spool being read");
	memset(&r, 0, sizeof(r));
	r.path_len = (uint32_t) strlen(e->path);
	r.link_len = e->link_target ? (uint32_t) strlen(e->link_target) : 0;
	r.nextents = e->nextents;
	r.crc32c = e->crc32c;
	r.mtime = e->mtime;
	r.size = e->size;
	r.stream_offset = e->stream_offset;
	r.stream_length = e->stream_length;
	r.mode = e->mode;
	r.type = e->type;
	r.flags = (e->sparse ? FLAG_SPARSE : 0) | (e->incremental ? FLAG_INCREMENTAL : 0) |
		(e->link_target ? FLAG_LINK : 0) | (id ? FLAG_ID : 0) | (times ? FLAG_TIMES : 0);
	/* stamps are checked (at most SB_FILE_ID_MAX bytes) before they are spooled */
	r.id_len = id ? (uint16_t) strlen(id) : 0;
	r.times_len = times ? (uint16_t) strlen(times) : 0;
	if (!append(s, &r, sizeof(r), err) || !append(s, e->path, r.path_len + 1, err) ||
		(e->link_target && !append(s, e->link_target, r.link_len + 1, err)) ||
		(id && !append(s, id, r.id_len + 1, err)) ||
		(times && !append(s, times, r.times_len + 1, err)) ||
		!append(s, zeros, strings_end(&r) - strings_used(&r), err) ||
		!append(s, e->extents, (size_t) e->nextents * sizeof(SbExtent), err))
		return false;
	s->count++;
	return true;
}

uint64_t
sb_entry_spool_count(const SbEntrySpool *s)
{
	return s->count;
}

bool
sb_entry_spool_rewind(SbEntrySpool *s, SbError *err)
{
	if (!s->reading && !flush(s, err))
		return false;
	s->reading = true;
	s->fill = s->pos = 0;
	s->file_pos = 0;
	return true;
}

/* Buffer *BUF of *CAP bytes grown to hold LEN (its bytes kept). */
static bool
hold(char **buf, size_t *cap, size_t len, SbError *err)
{
	char	   *grown;

	if (len <= *cap)
		return true;
	if ((grown = realloc(*buf, len)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading the manifest's entries");
	*buf = grown;
	*cap = len;
	return true;
}

/* At least LEN unread bytes in the buffer (grown if needed); false at the file's end or on failure. */
static bool
have(SbEntrySpool *s, size_t len, SbError *err)
{
	if (s->fill - s->pos >= len)
		return true;
	memmove(s->buf, s->buf + s->pos, s->fill - s->pos);
	s->fill -= s->pos;
	s->pos = 0;
	if (!hold(&s->buf, &s->cap, len, err))
		return false;
	while (s->fill < len && s->file_pos < s->written)
	{
		ssize_t		n = sb_pread_upto(s->fd, s->buf + s->fill, s->cap - s->fill, s->file_pos,
									  "the manifest's entries", err);

		if (n < 0)
			return false;
		if (n == 0)
			break;
		s->fill += (size_t) n;
		s->file_pos += (uint64_t) n;
	}
	if (s->fill < len)
		return sb_error_set(err, SB_EIO, "the manifest's entries end in the middle of one");
	return true;
}

/* Entry *E from record R, whose bytes start at P (8-byte aligned). */
static void
decode(const Record *r, char *p, SbEntry *e)
{
	char	   *str = p + sizeof(Record);

	memset(e, 0, sizeof(*e));
	e->path = str;
	str += r->path_len + 1;
	if (r->flags & FLAG_LINK)
	{
		e->link_target = str;
		str += r->link_len + 1;
	}
	if (r->flags & FLAG_ID)
	{
		e->file_id = str;
		str += r->id_len + 1;
	}
	if (r->flags & FLAG_TIMES)
		e->file_times = str;
	e->extents = r->nextents > 0 ? (SbExtent *) (p + strings_end(r)) : NULL;
	e->nextents = r->nextents;
	e->crc32c = r->crc32c;
	e->mtime = r->mtime;
	e->size = r->size;
	e->stream_offset = r->stream_offset;
	e->stream_length = r->stream_length;
	e->mode = r->mode;
	e->type = r->type;
	e->sparse = (r->flags & FLAG_SPARSE) != 0;
	e->incremental = (r->flags & FLAG_INCREMENTAL) != 0;
}

bool
sb_entry_spool_next(SbEntrySpool *s, SbEntry *e, bool *end, SbError *err)
{
	Record		r;

	*end = false;
	if (!s->reading)
		return sb_error_set(err, SB_EINVAL, "internal error: a spool read before it was rewound");
	if (s->pos == s->fill && s->file_pos == s->written)
	{
		*end = true;
		return false;
	}
	if (!have(s, sizeof(r), err))
		return false;
	memcpy(&r, s->buf + s->pos, sizeof(r));
	if (!have(s, record_size(&r), err))
		return false;
	/* 8-byte aligned: every record's size is a multiple of 8 */
	decode(&r, s->buf + s->pos, e);
	s->pos += record_size(&r);
	return true;
}

uint64_t
sb_entry_spool_tell(const SbEntrySpool *s)
{
	return s->file_pos - (s->fill - s->pos);
}

/* LEN bytes of the spool at OFFSET into the random-read buffer, from byte HAVE on. */
static bool
read_into_at_buf(SbEntrySpool *s, uint64_t offset, size_t have, size_t len, SbError *err)
{
	ssize_t		n;

	if (!hold(&s->at_buf, &s->at_cap, len, err))
		return false;
	n = sb_pread_upto(s->fd, s->at_buf + have, len - have, offset + have,
					  "the manifest's entries", err);
	if (n >= 0 && (size_t) n < len - have)
		return sb_error_set(err, SB_EIO, "the manifest's entries end in the middle of one");
	return n >= 0;
}

bool
sb_entry_spool_read_at(SbEntrySpool *s, uint64_t offset, SbEntry *e, SbError *err)
{
	Record		r;
	size_t		first;

	if (!s->reading || offset % 8 != 0 || offset >= s->written ||
		s->written - offset < sizeof(Record))
		return sb_error_set(err, SB_EINVAL, "internal error: no entry at byte %llu of the spool",
							(unsigned long long) offset);
	first = s->written - offset < AT_READ ? (size_t) (s->written - offset) : AT_READ;
	if (!read_into_at_buf(s, offset, 0, first, err))
		return false;
	memcpy(&r, s->at_buf, sizeof(r));
	if (record_size(&r) > s->written - offset)
		return sb_error_set(err, SB_EIO, "the manifest's entries end in the middle of one");
	if (record_size(&r) > first && !read_into_at_buf(s, offset, first, record_size(&r), err))
		return false;
	decode(&r, s->at_buf, e);
	return true;
}

void
sb_entry_spool_free(SbEntrySpool *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->at_buf);
	free(s);
}
