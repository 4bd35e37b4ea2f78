/*
 * s3_xml.c
 *		Reading S3's XML replies with libxml2: no network access, no entity
 *		expansion, no DTD loading (a reply is data from a server we do not
 *		trust further than its signature-free answers deserve).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "s3_xml.h"

#define PARSE_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOBLANKS)

static xmlDocPtr
parse(const char *body, size_t len)
{
	if (body == NULL || len == 0 || len > INT32_MAX)
		return NULL;
	return xmlReadMemory(body, (int) len, "s3-reply.xml", NULL, PARSE_OPTIONS);
}

static bool
named(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcmp((const char *) n->name, name) == 0;
}

/* The first element named NAME at or under N, depth first. */
static xmlNodePtr
find(xmlNodePtr n, const char *name)
{
	for (; n != NULL; n = n->next)
	{
		xmlNodePtr	found;

		if (named(n, name))
			return n;
		if ((found = find(n->children, name)) != NULL)
			return found;
	}
	return NULL;
}

/* The text of N's child NAME into OUT (cut to fit); "" when absent. */
static void
child_text(xmlNodePtr n, const char *name, char *out, size_t len)
{
	xmlNodePtr	c = n != NULL ? find(n->children, name) : NULL;
	xmlChar    *text = c != NULL ? xmlNodeGetContent(c) : NULL;

	out[0] = '\0';
	if (text != NULL)
	{
		snprintf(out, len, "%s", (const char *) text);
		xmlFree(text);
	}
}

bool
sb_s3_xml_error(const char *body, size_t len, char *code, size_t code_len,
				char *message, size_t message_len)
{
	xmlDocPtr	doc = parse(body, len);
	xmlNodePtr	root = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
	bool		is_error = root != NULL && named(root, "Error");

	code[0] = message[0] = '\0';
	if (is_error)
	{
		child_text(root, "Code", code, code_len);
		child_text(root, "Message", message, message_len);
	}
	xmlFreeDoc(doc);
	return is_error;
}

bool
sb_s3_xml_text(const char *body, size_t len, const char *name, char *out, size_t out_len,
			   SbError *err)
{
	xmlDocPtr	doc = parse(body, len);
	xmlNodePtr	n = doc != NULL ? find(xmlDocGetRootElement(doc), name) : NULL;
	xmlChar    *text = n != NULL ? xmlNodeGetContent(n) : NULL;
	bool		ok = text != NULL && strlen((const char *) text) < out_len;

	if (ok)
		strcpy(out, (const char *) text);
	xmlFree(text);
	xmlFreeDoc(doc);
	if (!ok)
		return sb_error_set(err, SB_ECORRUPT, "the S3 server's reply has no usable <%s>", name);
	return true;
}

/* Each child of the root named ITEM, its fields read by the caller's names, to FN. */
static bool
each_item(xmlNodePtr root, const char *item, bool uploads, SbS3ItemFn fn, void *arg, SbError *err)
{
	for (xmlNodePtr n = root->children; n != NULL; n = n->next)
	{
		char		key[1024];
		char		size[32];
		char		upload_id[1024];
		SbS3Item	it;

		if (!named(n, item))
			continue;
		child_text(n, "Key", key, sizeof(key));
		child_text(n, uploads ? "UploadId" : "Size", uploads ? upload_id : size,
				   uploads ? sizeof(upload_id) : sizeof(size));
		it.key = key;
		it.size = uploads ? 0 : strtoull(size, NULL, 10);
		it.upload_id = uploads ? upload_id : NULL;
		if (!fn(arg, &it, err))
			return false;
	}
	return true;
}

static bool
read_listing(const char *body, size_t len, const char *root_name, const char *item, bool uploads,
			 SbS3ItemFn fn, void *arg, SbS3Page *page, SbError *err)
{
	xmlDocPtr	doc = parse(body, len);
	xmlNodePtr	root = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
	char		truncated[16];
	bool		ok;

	memset(page, 0, sizeof(*page));
	if (root == NULL || !named(root, root_name))
	{
		xmlFreeDoc(doc);
		return sb_error_set(err, SB_ECORRUPT, "the S3 server's reply is not a %s", root_name);
	}
	child_text(root, "IsTruncated", truncated, sizeof(truncated));
	page->truncated = strcmp(truncated, "true") == 0;
	child_text(root, uploads ? "NextKeyMarker" : "NextContinuationToken", page->next, sizeof(page->next));
	if (uploads)
		child_text(root, "NextUploadIdMarker", page->next_upload, sizeof(page->next_upload));
	ok = each_item(root, item, uploads, fn, arg, err);
	xmlFreeDoc(doc);
	return ok;
}

bool
sb_s3_xml_objects(const char *body, size_t len, SbS3ItemFn fn, void *arg, SbS3Page *page,
				  SbError *err)
{
	return read_listing(body, len, "ListBucketResult", "Contents", false, fn, arg, page, err);
}

bool
sb_s3_xml_uploads(const char *body, size_t len, SbS3ItemFn fn, void *arg, SbS3Page *page,
				  SbError *err)
{
	return read_listing(body, len, "ListMultipartUploadsResult", "Upload", true, fn, arg, page, err);
}
