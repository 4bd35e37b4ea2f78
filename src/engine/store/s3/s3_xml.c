/*
 * s3_xml.c
 *		Reading S3's XML replies as a stream: libxml2's xmlTextReader hands
 *		over one node at a time and frees it when it moves on, so no tree is
 *		built and memory does not grow with the reply (whose size the client
 *		caps: s3_client.h).  A reply is data from a server we trust no
 *		further than its answers deserve: no network access, no DTD loaded,
 *		and a reply with a DOCTYPE is refused before libxml2 sees it (S3
 *		sends none; entities declared there are how a small reply expands
 *		into a huge one, or reads a local file).  Without a DTD an entity
 *		reference other than XML's five is not well-formed, and refused too.
 *		libxml2 prints nothing: its errors go to a handler that drops them.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

#include "store/s3/s3_xml.h"

#define PARSE_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOBLANKS)
#define PAGE_ITEMS_MAX 1000		/* S3's max-keys and max-uploads, which the client sends */
#define ITEM_KEY_MAX 1024		/* S3's longest key, in bytes */

/* A reply being read: the reader, the node it is on. */
typedef struct XmlStream
{
	xmlTextReaderPtr reader;
	int			type;			/* XML_READER_TYPE_* of the node */
	int			depth;			/* 0: the root element */
	const char *name;			/* the node's local name (no namespace prefix) */
	SbError    *err;
} XmlStream;

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

/* libxml2 sets up its globals once, before any thread parses (it is not safe to race). */
static void
init_xml(void)
{
	xmlInitParser();
}

/* libxml2's messages about a reply: dropped (the caller reports the failure). */
static void
drop_message(void *arg, xmlErrorPtr error)
{
	(void) arg;
	(void) error;
}

/* A DOCTYPE anywhere in BODY (S3 sends none). */
static bool
has_doctype(const char *body, size_t len)
{
	return memmem(body, len, "<!DOCTYPE", 9) != NULL;
}

/* Start reading BODY; false (ERR) when it is empty, too large or has a DOCTYPE. */
static bool
stream_open(XmlStream *x, const char *body, size_t len, SbError *err)
{
	memset(x, 0, sizeof(*x));
	x->err = err;
	if (body == NULL || len == 0 || len > INT_MAX)
		return sb_error_set(err, SB_ECORRUPT, "the S3 server's reply is empty or too large to be XML");
	if (has_doctype(body, len))
		return sb_error_set(err, SB_ECORRUPT,
							"the S3 server's reply has a DOCTYPE (S3 sends none; its entities could expand the "
							"reply or read files): refused");
	pthread_once(&xml_once, init_xml);
	x->reader = xmlReaderForMemory(body, (int) len, "s3-reply.xml", NULL, PARSE_OPTIONS);
	if (x->reader == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading the S3 server's reply");
	xmlTextReaderSetStructuredErrorHandler(x->reader, drop_message, NULL);
	return true;
}

static void
stream_close(XmlStream *x)
{
	if (x->reader != NULL)
		xmlFreeTextReader(x->reader);
	x->reader = NULL;
}

/* The next node: 1, 0 at the end of the document, -1 (ERR) when the XML is not well-formed. */
static int
stream_next(XmlStream *x)
{
	int			ret = xmlTextReaderRead(x->reader);

	if (ret < 0)
		return sb_error_set(x->err, SB_ECORRUPT, "the S3 server's reply is not well-formed XML"), -1;
	if (ret == 0)
		return 0;
	x->type = xmlTextReaderNodeType(x->reader);
	x->depth = xmlTextReaderDepth(x->reader);
	x->name = (const char *) xmlTextReaderConstLocalName(x->reader);
	if (x->name == NULL)
		x->name = "";
	if (x->type == XML_READER_TYPE_ENTITY_REFERENCE || x->type == XML_READER_TYPE_DOCUMENT_TYPE)
		return sb_error_set(x->err, SB_ECORRUPT, "the S3 server's reply refers to an entity: refused"), -1;
	return 1;
}

/* Is the stream on the start of an element NAME at DEPTH? */
static bool
at_element(const XmlStream *x, int depth, const char *name)
{
	return x->type == XML_READER_TYPE_ELEMENT && x->depth == depth && strcmp(x->name, name) == 0;
}

/* Append the text of the node the stream is on to OUT (USED of LEN), cut to fit; false when it was cut. */
static bool
append_text(XmlStream *x, char *out, size_t len, size_t *used)
{
	const char *v = (const char *) xmlTextReaderConstValue(x->reader);
	size_t		n = v != NULL ? strlen(v) : 0;
	size_t		room = len - 1 - *used;

	if (n == 0)
		return true;
	memcpy(out + *used, v, n < room ? n : room);
	*used += n < room ? n : room;
	out[*used] = '\0';
	return n <= room;
}

/*
 * The text of element NAME, which the stream is on, into OUT; the stream
 * is left on its end.  Text longer than LEN - 1 is cut (CUT) or refused,
 * an element inside it refused: the fields read are plain text.
 */
static bool
element_text(XmlStream *x, const char *name, char *out, size_t len, bool cut)
{
	int			depth = x->depth;
	size_t		used = 0;
	bool		fits = true;
	int			ret;

	out[0] = '\0';
	if (xmlTextReaderIsEmptyElement(x->reader))
		return true;
	while ((ret = stream_next(x)) > 0)
	{
		if (x->type == XML_READER_TYPE_END_ELEMENT && x->depth == depth)
			return fits || cut ||
				sb_error_set(x->err, SB_ECORRUPT, "the S3 server's <%s> is longer than %zu bytes", name, len - 1);
		if (x->type == XML_READER_TYPE_ELEMENT)
			return sb_error_set(x->err, SB_ECORRUPT, "the S3 server's <%s> holds an element <%s>", name, x->name);
		if (x->type == XML_READER_TYPE_TEXT || x->type == XML_READER_TYPE_CDATA ||
			x->type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE)
			fits = fits && append_text(x, out, len, &used);
	}
	return ret == 0 ? sb_error_set(x->err, SB_ECORRUPT, "the S3 server's reply ends inside <%s>", name) : false;
}

/* The root element, which must be ROOT. */
static bool
expect_root(XmlStream *x, const char *root)
{
	int			ret;

	while ((ret = stream_next(x)) > 0)
		if (x->type == XML_READER_TYPE_ELEMENT)
			return strcmp(x->name, root) == 0 ||
				sb_error_set(x->err, SB_ECORRUPT, "the S3 server's reply is not a %s but a <%s>", root, x->name);
	return ret == 0 ? sb_error_set(x->err, SB_ECORRUPT, "the S3 server's reply is not a %s", root) : false;
}

bool
sb_s3_xml_error(const char *body, size_t len, char *code, size_t code_len,
				char *message, size_t message_len)
{
	SbError		err;
	XmlStream	x;
	bool		ok;
	int			ret = 0;

	code[0] = message[0] = '\0';
	if (!stream_open(&x, body, len, &err))
		return false;
	ok = expect_root(&x, "Error");
	while (ok && (ret = stream_next(&x)) > 0)
	{
		if (at_element(&x, 1, "Code"))
			ok = element_text(&x, "Code", code, code_len, true);
		else if (at_element(&x, 1, "Message"))
			ok = element_text(&x, "Message", message, message_len, true);
	}
	stream_close(&x);
	return ok && ret == 0;
}

bool
sb_s3_xml_text(const char *body, size_t len, const char *name, char *out, size_t out_len,
			   SbError *err)
{
	XmlStream	x;
	int			ret = 0;
	bool		found = false;
	bool		ok;

	ok = stream_open(&x, body, len, err);
	while (ok && !found && (ret = stream_next(&x)) > 0)
		if (x.type == XML_READER_TYPE_ELEMENT && strcmp(x.name, name) == 0)
		{
			ok = element_text(&x, name, out, out_len, false);
			found = true;
		}
	stream_close(&x);
	if (ok && (!found || out[0] == '\0'))
		return sb_error_set(err, SB_ECORRUPT, "the S3 server's reply has no usable <%s>", name);
	return ok && ret >= 0;
}

/* What a listing's items are called, and how its page says where it goes on. */
typedef struct ListingKind
{
	const char *root;			/* ListBucketResult */
	const char *item;			/* Contents */
	const char *second;			/* the item's field beside Key: Size, or UploadId */
	const char *next;			/* NextContinuationToken, or NextKeyMarker */
	const char *next_upload;	/* NextUploadIdMarker, or NULL */
} ListingKind;

static const ListingKind objects_kind = {"ListBucketResult", "Contents", "Size", "NextContinuationToken", NULL};
static const ListingKind uploads_kind = {"ListMultipartUploadsResult", "Upload", "UploadId", "NextKeyMarker",
"NextUploadIdMarker"};

/* An object's size: digits only. */
static bool
parse_size(const char *text, uint64_t *size, SbError *err)
{
	char	   *end;

	errno = 0;
	*size = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0)
		return sb_error_set(err, SB_ECORRUPT, "the S3 server's listing gives size \"%.40s\", not a number", text);
	return true;
}

/* The item the stream is on (depth 1), its fields read, to FN. */
static bool
read_item(XmlStream *x, const ListingKind *k, SbS3ItemFn fn, void *arg)
{
	char		key[ITEM_KEY_MAX + 1] = "";
	char		second[1024] = "";
	SbS3Item	it = {key, 0, NULL};
	int			ret;

	if (xmlTextReaderIsEmptyElement(x->reader))
		return sb_error_set(x->err, SB_ECORRUPT, "the S3 server's listing has an empty <%s>", k->item);
	while ((ret = stream_next(x)) > 0 && !(x->type == XML_READER_TYPE_END_ELEMENT && x->depth == 1))
	{
		bool		ok = true;

		if (at_element(x, 2, "Key"))
			ok = element_text(x, "Key", key, sizeof(key), false);
		else if (at_element(x, 2, k->second))
			ok = element_text(x, k->second, second, sizeof(second), false);
		if (!ok)
			return false;
	}
	if (ret <= 0)
		return ret == 0 ? sb_error_set(x->err, SB_ECORRUPT, "the S3 server's listing ends inside <%s>", k->item) :
			false;
	if (key[0] == '\0')
		return sb_error_set(x->err, SB_ECORRUPT, "the S3 server's listing has a <%s> without a <Key>", k->item);
	if (k->next_upload != NULL)
		it.upload_id = second;
	else if (!parse_size(second, &it.size, x->err))
		return false;
	return fn(arg, &it, x->err);
}

/* One element of a page (depth 1): an item to FN, or where the page goes on into PAGE. */
static bool
read_page_element(XmlStream *x, const ListingKind *k, SbS3ItemFn fn, void *arg, SbS3Page *page,
				  unsigned *items)
{
	char		truncated[16];

	if (at_element(x, 1, k->item))
	{
		if (++*items > PAGE_ITEMS_MAX)
			return sb_error_set(x->err, SB_ECORRUPT,
								"the S3 server's listing page holds more than the %d items asked for", PAGE_ITEMS_MAX);
		return read_item(x, k, fn, arg);
	}
	if (at_element(x, 1, "IsTruncated"))
	{
		if (!element_text(x, "IsTruncated", truncated, sizeof(truncated), false))
			return false;
		page->truncated = strcmp(truncated, "true") == 0;
		return true;
	}
	if (at_element(x, 1, k->next))
		return element_text(x, k->next, page->next, sizeof(page->next), false);
	if (k->next_upload != NULL && at_element(x, 1, k->next_upload))
		return element_text(x, k->next_upload, page->next_upload, sizeof(page->next_upload), false);
	return true;
}

static bool
read_listing(const char *body, size_t len, const ListingKind *k, SbS3ItemFn fn, void *arg,
			 SbS3Page *page, SbError *err)
{
	XmlStream	x;
	unsigned	items = 0;
	int			ret = 0;
	bool		ok;

	memset(page, 0, sizeof(*page));
	ok = stream_open(&x, body, len, err) && expect_root(&x, k->root);
	while (ok && (ret = stream_next(&x)) > 0)
		ok = read_page_element(&x, k, fn, arg, page, &items);
	stream_close(&x);
	return ok && ret == 0;
}

bool
sb_s3_xml_objects(const char *body, size_t len, SbS3ItemFn fn, void *arg, SbS3Page *page,
				  SbError *err)
{
	return read_listing(body, len, &objects_kind, fn, arg, page, err);
}

bool
sb_s3_xml_uploads(const char *body, size_t len, SbS3ItemFn fn, void *arg, SbS3Page *page,
				  SbError *err)
{
	return read_listing(body, len, &uploads_kind, fn, arg, page, err);
}
