'use strict';
// Preloaded into s3rver 3.7.1 by s3server.sh (node --require): what makes it
// fit for testing an S3 client, without touching node_modules.
//
// Always:
//   - Node 18 and later give up on a request that takes longer than 5
//     minutes to arrive (server.requestTimeout), which a slow upload through
//     fault-proxy.js's rate_bps can; real S3 has no such limit.  Lifted.
//
// Unless SB_S3RVER_PATCHES=0, multipart uploads behave as on S3 where
// s3rver 3.7.1 does not (README.md lists what it does without them):
//   - AbortMultipartUpload (DELETE /bucket/key?uploadId=U): 204, and the
//     upload's parts are gone; 404 NoSuchUpload for an unknown upload
//     (s3rver answers 405 MethodNotAllowed and keeps the parts);
//   - ListMultipartUploads (GET /bucket?uploads[&prefix=P]): the uploads in
//     progress, in one answer (s3rver answers 501 NotImplemented);
//   - UploadPart to an unknown upload: 404 NoSuchUpload (s3rver stores the
//     part, making up the upload); part numbers outside 1..10000: 400
//     InvalidArgument;
//   - CompleteMultipartUpload: 404 NoSuchUpload for an unknown upload (s3rver:
//     500), 400 InvalidPartOrder unless the part numbers ascend, 400
//     InvalidPart for a part never uploaded (s3rver crashes: the whole server
//     exits) or whose ETag is not the part's.
//   - ListObjects and ListObjectsV2 (GET /bucket): keys in S3's order (by
//     their UTF-8 bytes; s3rver lists "a/b" before "a-b", so that pages skip
//     keys), common prefixes counted against max-keys, and V2 pages (s3rver
//     makes its continuation tokens with DES, which Node 17 and later lack:
//     500 InternalError for any truncated V2 listing).
// Not changed: a completed multipart object's ETag is the MD5 of its whole
// content (S3: MD5 of the parts' MD5s, "-" and the part count), parts may
// be smaller than 5 MiB, there is no ListParts.
const fs = require('fs');
const http = require('http');
const path = require('path');

const createServer = http.createServer;
http.createServer = function (...args) {
  const server = createServer.apply(this, args);
  server.requestTimeout = 0;
  return server;
};

if (process.env.SB_S3RVER_PATCHES !== '0') {
  const lib = path.join(__dirname, 'node_modules', 's3rver', 'lib');
  const S3rver = require(path.join(lib, 's3rver.js'));
  const S3Error = require(path.join(lib, 'models', 'error.js'));
  const FilesystemStore = require(path.join(lib, 'stores', 'filesystem.js'));
  const { DUMMY_ACCOUNT } = require(path.join(lib, 'models', 'account.js'));

  const uploadDir = (store, bucket, uploadId) =>
    path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);

  const noSuchUpload = uploadId =>
    new S3Error(
      'NoSuchUpload',
      'The specified upload does not exist. The upload ID may be invalid, ' +
        'or the upload may have been aborted or completed.',
      { UploadId: uploadId },
    );

  // The key of upload UPLOADID, or null when there is no such upload.
  function uploadKey(store, bucket, uploadId) {
    if (!/^[0-9A-Za-z_-]+$/.test(uploadId || '')) return null;
    try {
      return fs.readFileSync(path.join(uploadDir(store, bucket, uploadId), 'key'), 'utf8');
    } catch (err) {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw err;
    }
  }

  const putPart = FilesystemStore.prototype.putPart;
  FilesystemStore.prototype.putPart = async function (bucket, uploadId, partNumber, content) {
    if (!/^[0-9]+$/.test(String(partNumber)) || +partNumber < 1 || +partNumber > 10000) {
      throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', {
        ArgumentName: 'partNumber',
        ArgumentValue: String(partNumber),
      });
    }
    if (uploadKey(this, bucket, uploadId) === null) throw noSuchUpload(uploadId);
    return putPart.call(this, bucket, uploadId, Number(partNumber), content);
  };

  const putObjectMultipart = FilesystemStore.prototype.putObjectMultipart;
  FilesystemStore.prototype.putObjectMultipart = async function (bucket, uploadId, parts) {
    if (uploadKey(this, bucket, uploadId) === null) throw noSuchUpload(uploadId);
    const dir = uploadDir(this, bucket, uploadId);
    for (let i = 0; i < parts.length; i++) {
      const { number, etag } = parts[i];
      if (!Number.isInteger(number) || (i > 0 && number <= parts[i - 1].number)) {
        throw new S3Error('InvalidPartOrder', 'The list of parts was not in ascending order. ' +
          'Parts list must be specified in order by part number.');
      }
      let md5;
      try {
        md5 = fs.readFileSync(path.join(dir, `${number}.md5`), 'utf8');
      } catch (err) {
        if (err.code !== 'ENOENT') throw err;
      }
      if (md5 === undefined || md5 !== etag) {
        throw new S3Error('InvalidPart', 'One or more of the specified parts could not be found. ' +
          "The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
          { UploadId: uploadId, PartNumber: number, ETag: etag });
      }
    }
    return putObjectMultipart.call(this, bucket, uploadId, parts);
  };

  async function abortUpload(ctx, bucket, key) {
    const uploadId = ctx.query.uploadId;
    if (uploadKey(ctx.store, bucket, uploadId) !== key) throw noSuchUpload(uploadId);
    fs.rmSync(uploadDir(ctx.store, bucket, uploadId), { recursive: true, force: true });
    ctx.logger.info('Aborted upload %s of "%s" in bucket "%s"', uploadId, key, bucket);
    ctx.status = 204;
  }

  async function listUploads(ctx, bucket) {
    const prefix = ctx.query.prefix || '';
    const base = ctx.store.getResourcePath(bucket, undefined, 'uploads');
    let ids = [];
    try {
      ids = fs.readdirSync(base);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    const uploads = [];
    for (const id of ids) {
      const key = uploadKey(ctx.store, bucket, id);
      if (key === null || !key.startsWith(prefix)) continue;
      const initiated = fs.statSync(path.join(base, id, 'key')).mtime;
      uploads.push({ key, id, initiated });
    }
    uploads.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.initiated - b.initiated));
    const owner = { ID: DUMMY_ACCOUNT.id, DisplayName: DUMMY_ACCOUNT.displayName };
    ctx.body = {
      ListMultipartUploadsResult: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        Bucket: bucket,
        KeyMarker: '',
        UploadIdMarker: '',
        Prefix: prefix,
        MaxUploads: 1000,
        IsTruncated: false,
        Upload: uploads.map(u => ({
          Key: u.key,
          UploadId: u.id,
          Initiator: owner,
          Owner: owner,
          StorageClass: 'STANDARD',
          Initiated: u.initiated.toISOString(),
        })),
      },
    };
  }

  // ---------- ListObjects (V1 and V2) ----------

  const OBJECT_SUFFIX = '._S3rver_object';
  const byteOrder = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

  // Every key of BUCKET, in S3's order (by their UTF-8 bytes).
  function allKeys(store, bucket) {
    const root = store.getBucketPath(bucket);
    const keys = [];
    const walk = rel => {
      let entries;
      try {
        entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
      } catch (err) {
        if (err.code === 'ENOENT') return; // a folder deleted meanwhile
        throw err;
      }
      for (const e of entries) {
        if (e.isDirectory()) {
          if (rel === '' && e.name === '._S3rver_uploads') continue;
          walk(rel + e.name + '/');
        } else if (e.name.endsWith(OBJECT_SUFFIX)) {
          keys.push(rel + e.name.slice(0, -OBJECT_SUFFIX.length));
        }
      }
    };
    walk('');
    return keys.sort(byteOrder);
  }

  const TOKEN_TAG = 'sb-s3rver-patches:';
  const encodeToken = key => Buffer.from(TOKEN_TAG + key).toString('base64');
  function decodeToken(token) {
    const text = Buffer.from(token, 'base64').toString();
    if (!text.startsWith(TOKEN_TAG)) {
      throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect', {
        ArgumentName: 'continuation-token',
      });
    }
    return text.slice(TOKEN_TAG.length);
  }

  // S3's ListObjects (V1) and ListObjectsV2: s3rver 3.7.1 lists keys in the
  // order of its folders ("a/b" before "a-b"), so that pages skip keys,
  // counts no common prefix against max-keys, and its V2 continuation
  // tokens need DES, which Node 17 and later (OpenSSL 3) no longer have.
  async function listObjects(ctx, bucket) {
    const q = ctx.query;
    const v2 = q['list-type'] === '2';
    const prefix = q.prefix || '';
    const delimiter = q.delimiter || '';
    let maxKeys = 1000;
    if (q['max-keys'] !== undefined) {
      if (!/^\d+$/.test(q['max-keys'])) {
        throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range', {
          ArgumentName: 'max-keys',
          ArgumentValue: q['max-keys'],
        });
      }
      maxKeys = Math.min(1000, Number(q['max-keys']));
    }
    let after = '';
    if (v2) {
      after = q['continuation-token'] ? decodeToken(q['continuation-token']) : q['start-after'] || '';
    } else {
      after = q.marker || '';
    }
    // Keys after AFTER, then each run of keys with the same common prefix
    // as one entry; LAST is the greatest key an entry stands for.
    const entries = [];
    for (const key of allKeys(ctx.store, bucket)) {
      if (!key.startsWith(prefix) || (after && byteOrder(key, after) <= 0)) continue;
      const i = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (i >= 0) {
        const commonPrefix = key.slice(0, i + delimiter.length);
        const prev = entries[entries.length - 1];
        if (prev && prev.prefix === commonPrefix) prev.last = key;
        else entries.push({ prefix: commonPrefix, last: key });
      } else {
        entries.push({ key, last: key });
      }
    }
    const page = entries.slice(0, maxKeys);
    const truncated = page.length > 0 && entries.length > page.length; // max-keys=0: not truncated
    const urlEncode = ctx.query['encoding-type'] === 'url';
    const enc = s => (urlEncode ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
    const contents = [];
    for (const e of page) {
      if (e.key === undefined) continue;
      let md;
      try {
        md = await ctx.store.getMetadata(bucket, e.key);
      } catch (err) {
        if (err.code === 'ENOENT') continue; // deleted meanwhile
        throw err;
      }
      contents.push({
        Key: enc(e.key),
        LastModified: new Date(md['last-modified']).toISOString(),
        ETag: md.etag,
        Size: md['content-length'],
        Owner: !v2 || q['fetch-owner'] === 'true'
          ? { ID: DUMMY_ACCOUNT.id, DisplayName: DUMMY_ACCOUNT.displayName }
          : undefined,
        StorageClass: 'STANDARD',
      });
    }
    const lastOnPage = page.length ? page[page.length - 1] : null;
    ctx.body = {
      ListBucketResult: {
        '@': { xmlns: 'http://s3.amazonaws.com/doc/2006-03-01/' },
        Name: bucket,
        Prefix: enc(prefix),
        ...(v2
          ? {
              StartAfter: q['start-after'] !== undefined ? enc(q['start-after']) : undefined,
              ContinuationToken: q['continuation-token'] || undefined,
              NextContinuationToken: truncated ? encodeToken(lastOnPage.last) : undefined,
              KeyCount: page.length,
            }
          : {
              Marker: enc(q.marker || ''),
              NextMarker: truncated && delimiter
                ? enc(lastOnPage.key !== undefined ? lastOnPage.key : lastOnPage.prefix)
                : undefined,
            }),
        MaxKeys: maxKeys,
        Delimiter: delimiter ? enc(delimiter) : undefined,
        EncodingType: urlEncode ? 'url' : undefined,
        IsTruncated: truncated,
        Contents: contents,
        CommonPrefixes: page.filter(e => e.prefix !== undefined).map(e => ({ Prefix: enc(e.prefix) })),
      },
    };
  }

  // Before s3rver's router (the last middleware), after its virtual-host
  // rewriting: ctx.path is /bucket[/key].
  async function patchMiddleware(ctx, next) {
    const m = /^\/([^/]+)(?:\/(.*))?$/.exec(ctx.path);
    const onKey = m && m[2] !== undefined && m[2] !== '';
    const onBucket = m && !onKey; // "/bucket" or "/bucket/"
    const isAbort = onKey && ctx.method === 'DELETE' && 'uploadId' in ctx.query;
    const isListUploads = onBucket && ctx.method === 'GET' && 'uploads' in ctx.query;
    // GET /bucket with none of s3rver's subresources (cors, location, ...)
    const isList = onBucket && ctx.method === 'GET' && !Object.keys(ctx.query).some(p =>
      !['list-type', 'prefix', 'delimiter', 'max-keys', 'start-after', 'continuation-token',
        'fetch-owner', 'encoding-type', 'marker'].includes(p) && !p.toLowerCase().startsWith('x-amz-'));
    if (!isAbort && !isListUploads && !isList) return next();
    const bucket = decodeURIComponent(m[1]);
    if (!(await ctx.store.getBucket(bucket))) {
      throw new S3Error('NoSuchBucket', 'The specified bucket does not exist', { BucketName: bucket });
    }
    if (isAbort) return abortUpload(ctx, bucket, decodeURIComponent(m[2]));
    if (isListUploads) return listUploads(ctx, bucket);
    return listObjects(ctx, bucket);
  }

  const callback = S3rver.prototype.callback;
  S3rver.prototype.callback = function (...args) {
    if (!this.middleware.includes(patchMiddleware)) {
      this.middleware.splice(this.middleware.length - 1, 0, patchMiddleware);
    }
    return callback.apply(this, args);
  };
}
