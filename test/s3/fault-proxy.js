#!/usr/bin/env node
// An HTTP reverse proxy in front of the test S3 server that injects faults.
//
//   node fault-proxy.js --listen PORT --upstream http://127.0.0.1:UPORT \
//                       --rules RULES.json --log LOG.jsonl
//
// --listen 0 takes any free port; the first line on standard output is the
// port listened on.  Every request and response passes unchanged and
// streamed (method, path and query, headers except the hop-by-hop ones
// Connection and Keep-Alive, status, body) unless a rule applies.
//
// RULES.json, read again for every request (a missing file: no rules; a
// file that does not parse: the last rules that did), is a list of
//
//   {"id": "r1", "method": "PUT", "query": "partNumber", "path": "^/bk1/",
//    "count": 2, "action": {...}}
//
// method (exact), query (a substring of the query string, without "?") and
// path (a JavaScript regular expression on the path, as sent, percent-encoded)
// are optional filters.  count is how many matching requests the rule
// applies to, counted per id for the life of the proxy (rewriting the file
// does not reset it; use a new id for that); without count, every one.  The
// first rule in the list that matches and has count left applies.  Actions:
//
//   {"status": 503}          answer that status without forwarding, with an
//                            S3 error body: <Error><Code>SlowDown for 503 and
//                            429, InternalError for 500, AccessDenied for 403,
//                            NoSuchKey for 404, BadRequest for 400, else the
//                            status's name; "code": "X" beside "status" says
//                            which.  The request body is read first, except
//                            after "Expect: 100-continue": then at once (and
//                            the connection closes), as S3 does
//   {"drop": true}           read the request, then close the connection
//                            without an answer
//   {"drop_after_bytes": K}  forward, then cut the connection after K bytes
//                            of the response body
//   {"delay_ms": M}          wait M ms, then forward
//   {"rate_bps": B}          forward, the request body and the response body
//                            each at B bytes per second at most
//   {"etag": "wrong"}        forward, with a different quoted ETag header in
//                            the response
//
// and the answers of a hostile server, none forwarded:
//
//   {"silence": true}        read the request, then say nothing: the
//                            connection stays open until the client closes it
//   {"list_loop": true}      answer a ListObjectsV2 page that is truncated and
//                            gives the same NextContinuationToken, every time:
//                            a listing that never ends
//   {"list_bytes": N}        answer a ListObjectsV2 page of N bytes (its
//                            Content-Length said), made as it is sent and never
//                            held: a listing too large for any client's memory
//
// Each fault applied is one JSON line in LOG.jsonl:
//   {"time": ISO-8601, "id", "method", "url", "action"}
// SIGTERM or SIGINT ends the proxy at once.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const { pipeline, Transform } = require('stream');

function usage(msg) {
  if (msg) process.stderr.write(`fault-proxy: ${msg}\n`);
  process.stderr.write(
    'usage: node fault-proxy.js --listen PORT --upstream http://HOST:PORT ' +
      '--rules RULES.json --log LOG.jsonl\n',
  );
  process.exit(2);
}

const opts = {};
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    const value = argv[i + 1];
    if (!['--listen', '--upstream', '--rules', '--log'].includes(name))
      usage(`unknown argument ${name}`);
    if (value === undefined) usage(`${name} needs a value`);
    opts[name.slice(2)] = value;
  }
  for (const name of ['listen', 'upstream', 'rules', 'log'])
    if (opts[name] === undefined) usage(`--${name} is missing`);
}
const upstream = new URL(opts.upstream);
if (upstream.protocol !== 'http:') usage('--upstream must be http://');
const upstreamHost = upstream.hostname;
const upstreamPort = Number(upstream.port || 80);

// ---------- rules ----------

let lastRules = [];
function readRules() {
  let text;
  try {
    text = fs.readFileSync(opts.rules, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return (lastRules = []);
    process.stderr.write(`fault-proxy: ${opts.rules}: ${err.message}\n`);
    return lastRules;
  }
  try {
    const rules = JSON.parse(text);
    if (!Array.isArray(rules)) throw new Error('not a list of rules');
    return (lastRules = rules);
  } catch (err) {
    process.stderr.write(`fault-proxy: ${opts.rules}: ${err.message}\n`);
    return lastRules;
  }
}

const used = new Map(); // rule id -> requests it applied to

// The rule for this request, its count taken, or null.
function takeRule(req) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const query = q < 0 ? '' : req.url.slice(q + 1);
  const rules = readRules();
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    if (!rule || typeof rule !== 'object' || !rule.action) continue;
    if (rule.method && rule.method.toUpperCase() !== req.method) continue;
    if (rule.query !== undefined && !query.includes(rule.query)) continue;
    if (rule.path !== undefined) {
      let re;
      try {
        re = new RegExp(rule.path);
      } catch (err) {
        process.stderr.write(`fault-proxy: rule ${rule.id}: ${err.message}\n`);
        continue;
      }
      if (!re.test(path)) continue;
    }
    const id = rule.id !== undefined ? String(rule.id) : `#${i}`;
    const n = used.get(id) || 0;
    if (rule.count !== undefined && n >= Number(rule.count)) continue;
    used.set(id, n + 1);
    return { ...rule, id };
  }
  return null;
}

function logFault(rule, req) {
  const line = JSON.stringify({
    time: new Date().toISOString(),
    id: rule.id,
    method: req.method,
    url: req.url,
    action: rule.action,
  });
  try {
    fs.appendFileSync(opts.log, line + '\n');
  } catch (err) {
    process.stderr.write(`fault-proxy: ${opts.log}: ${err.message}\n`);
  }
}

// ---------- streams ----------

// Passes bytes on at RATE bytes per second at most, in slices of about 50 ms.
class Throttle extends Transform {
  constructor(rate) {
    super();
    this.rate = Math.max(1, Number(rate));
    this.slice = Math.max(1, Math.floor(this.rate / 20));
    this.start = 0;
    this.sent = 0;
  }

  _transform(chunk, encoding, done) {
    if (!this.start) this.start = Date.now();
    let offset = 0;
    const next = () => {
      if (this.destroyed) return;
      if (offset >= chunk.length) return done();
      const piece = chunk.subarray(offset, offset + this.slice);
      const due = this.start + ((this.sent + piece.length) * 1000) / this.rate;
      const wait = due - Date.now();
      const push = () => {
        if (this.destroyed) return;
        offset += piece.length;
        this.sent += piece.length;
        this.push(piece);
        next();
      };
      if (wait > 0) setTimeout(push, wait);
      else push();
    };
    next();
  }
}

// ---------- forwarding ----------

// Idle connections to the upstream close after 4 s, before s3rver (Node)
// closes its side at 5 s, so that a request never goes out on a connection
// the upstream is closing.
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, timeout: 4000 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection']);

// rawHeaders ([name, value, name, value, ...]) less the hop-by-hop ones.
// REPLACE: { 'lower-case-name': [Name, value] } to put instead.
function endToEnd(raw, replace) {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name)) continue;
    if (replace && name in replace) continue;
    out.push(raw[i], raw[i + 1]);
  }
  if (replace) for (const [name, value] of Object.values(replace)) out.push(name, value);
  return out;
}

function differentEtag(etag) {
  const wrong = '"0123456789abcdef0123456789abcdef"';
  return etag === wrong ? '"fedcba9876543210fedcba9876543210"' : wrong;
}

const ERROR_CODES = {
  400: 'BadRequest',
  403: 'AccessDenied',
  404: 'NoSuchKey',
  429: 'SlowDown',
  500: 'InternalError',
  503: 'SlowDown',
};

function answerStatus(req, res, status, code, early) {
  code =
    code ||
    ERROR_CODES[status] ||
    (http.STATUS_CODES[status] || 'Error').replace(/[^A-Za-z]/g, '');
  const message =
    code === 'SlowDown'
      ? 'Please reduce your request rate.'
      : code === 'InternalError'
        ? 'We encountered an internal error. Please try again.'
        : `Injected by fault-proxy (${status}).`;
  const requestId = crypto.randomBytes(8).toString('hex').toUpperCase();
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message>` +
    `<RequestId>${requestId}</RequestId><HostId>fault-proxy</HostId></Error>`;
  const headers = {
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(body),
    'x-amz-request-id': requestId,
  };
  // The client waits for "100 Continue" before its body: there is no body
  // to read, and the connection cannot be used again.
  if (early) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(body);
}

// The prefix= of a listing's query, decoded ("" when none).
function listingPrefix(req) {
  const q = req.url.indexOf('?');
  const params = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  return params.get('prefix') || '';
}

function xmlEscape(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const LIST_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>';

// A truncated page whose continuation token is always the same.
function answerListLoop(req, res) {
  const key = xmlEscape(listingPrefix(req) + 'loop-object');
  const body =
    LIST_HEAD +
    '<IsTruncated>true</IsTruncated><NextContinuationToken>loop</NextContinuationToken>' +
    `<Contents><Key>${key}</Key><Size>1</Size></Contents></ListBucketResult>`;
  res.writeHead(200, {
    'Content-Type': 'application/xml',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

// A page of BYTES bytes, its items made in blocks of about 64 kB as the
// client takes them (no more is held); it stops when the client goes.
function answerBigListing(req, res, bytes) {
  const head = Buffer.from(LIST_HEAD + '<IsTruncated>false</IsTruncated>');
  const tail = Buffer.from('</ListBucketResult>');
  const item = `<Contents><Key>${xmlEscape(listingPrefix(req))}k-0123456789</Key><Size>1</Size></Contents>`;
  const block = Buffer.from(item.repeat(Math.max(1, Math.floor(65536 / item.length))));
  let left = Math.max(0, bytes - head.length - tail.length);
  res.writeHead(200, {
    'Content-Type': 'application/xml',
    'Content-Length': head.length + left + tail.length,
  });
  res.write(head);
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      // the last piece: blanks, where XML allows them, to make the size exact
      const piece = left >= block.length ? block : Buffer.alloc(left, ' ');
      left -= piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end(tail);
  };
  pump();
}

function forward(req, res, rule) {
  const action = (rule && rule.action) || {};
  const rate = action.rate_bps !== undefined ? Number(action.rate_bps) : 0;
  const cut =
    action.drop_after_bytes !== undefined ? Number(action.drop_after_bytes) : -1;

  const upReq = http.request({
    host: upstreamHost,
    port: upstreamPort,
    method: req.method,
    path: req.url,
    headers: endToEnd(req.rawHeaders),
    agent,
  });

  let finished = false;
  const abortBoth = () => {
    upReq.destroy();
    req.socket.destroy();
  };
  // The client went away before the answer was complete.
  res.on('close', () => {
    if (!finished) upReq.destroy();
  });
  res.on('finish', () => {
    finished = true;
  });

  upReq.on('error', err => {
    if (finished) return;
    if (!res.headersSent) {
      process.stderr.write(`fault-proxy: ${req.method} ${req.url}: ${err.message}\n`);
      const body = `fault-proxy: upstream: ${err.message}\n`;
      res.writeHead(502, {
        'Content-Type': 'text/plain',
        'Content-Length': Buffer.byteLength(body),
        Connection: 'close',
      });
      res.end(body);
    } else {
      req.socket.destroy();
    }
  });

  upReq.on('response', upRes => {
    let replace;
    if (action.etag !== undefined && upRes.headers.etag !== undefined)
      replace = { etag: ['ETag', differentEtag(upRes.headers.etag)] };
    res.writeHead(upRes.statusCode, upRes.statusMessage, endToEnd(upRes.rawHeaders, replace));
    upRes.on('aborted', () => req.socket.destroy());
    upRes.on('error', () => req.socket.destroy());

    if (cut >= 0) {
      let sent = 0;
      let done = false;
      upRes.on('data', chunk => {
        if (done) return;
        const room = cut - sent;
        if (chunk.length < room) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            upRes.pause();
            res.once('drain', () => upRes.resume());
          }
          return;
        }
        done = true;
        upRes.pause();
        const last = chunk.subarray(0, room);
        const destroy = () => {
          finished = true; // not really: but the cut is what was asked for
          req.socket.destroy();
          upRes.destroy();
          upReq.destroy();
        };
        if (last.length) {
          res.write(last, destroy);
        } else {
          res.flushHeaders(); // cut before the first byte: the headers only
          res.socket.write('', destroy);
        }
      });
      upRes.on('end', () => {
        if (!done) res.end();
      });
      return;
    }
    const stages = [upRes];
    if (rate > 0) stages.push(new Throttle(rate));
    stages.push(res);
    pipeline(...stages, err => {
      if (err && !finished) abortBoth();
    });
  });

  const up = [req];
  if (rate > 0) up.push(new Throttle(rate));
  up.push(upReq);
  pipeline(...up, err => {
    // The client's request broke off (or the upstream closed early, having
    // answered already; then the answer goes on).
    if (err && !upReq.res) abortBoth();
  });
}

function handle(req, res, expectsContinue) {
  let rule = null;
  try {
    rule = takeRule(req);
  } catch (err) {
    process.stderr.write(`fault-proxy: rules: ${err.stack}\n`);
  }
  const action = (rule && rule.action) || {};
  if (rule) logFault(rule, req);

  if (action.status !== undefined) {
    const status = Number(action.status);
    if (expectsContinue) {
      answerStatus(req, res, status, action.code, true);
      return;
    }
    req.resume();
    req.on('end', () => answerStatus(req, res, status, action.code, false));
    return;
  }
  if (action.silence) {
    req.resume(); // the request is read; no answer ever comes
    return;
  }
  if (action.list_loop) {
    req.resume();
    req.on('end', () => answerListLoop(req, res));
    return;
  }
  if (action.list_bytes !== undefined) {
    req.resume();
    req.on('end', () => answerBigListing(req, res, Number(action.list_bytes)));
    return;
  }
  if (expectsContinue) res.writeContinue();
  if (action.drop) {
    req.resume();
    req.on('end', () => req.socket.destroy());
    return;
  }
  if (action.delay_ms !== undefined) {
    const timer = setTimeout(() => forward(req, res, rule), Number(action.delay_ms));
    res.once('close', () => clearTimeout(timer)); // the client went away
    return;
  }
  forward(req, res, rule);
}

const server = http.createServer();
server.requestTimeout = 0; // a slow upload may take any time
server.headersTimeout = 60000;
server.keepAliveTimeout = 5000; // as s3rver (Node's default)
server.on('request', (req, res) => handle(req, res, false));
// Without this listener Node would send "100 Continue" itself.
server.on('checkContinue', (req, res) => handle(req, res, true));
server.on('clientError', (err, socket) => {
  if (socket.writable && !socket.destroyed)
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  else socket.destroy();
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => process.exit(0));
}

server.listen(Number(opts.listen), '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
server.on('error', err => {
  process.stderr.write(`fault-proxy: ${err.message}\n`);
  process.exit(1);
});
