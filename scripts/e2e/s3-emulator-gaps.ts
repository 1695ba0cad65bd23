/**
 * The two S3 behaviours the store needs that fauxqs 1.9 does not serve, answered in front of its own routes (a
 * preHandler hook on its fastify app); everything else goes to fauxqs unchanged. test/blob/s3-emulator-gaps.test.ts
 * shows what fauxqs alone answers for each.
 *
 * - Object tagging (GetObjectTagging, PutObjectTagging, `?tagging`): fauxqs routes these as GetObject and PutObject,
 *   so a PutObjectTagging replaced the object's bytes with the tag XML. Here the tag set is kept per object and goes
 *   with it: a PutObject (a new object) starts without tags, and a missing object is NoSuchKey (NoSuchBucket for a
 *   missing bucket), as fauxqs's GetObject answers. DeleteObjectTagging and tags sent with PutObject
 *   (x-amz-tagging) are answered 501 NotImplemented: the store uses neither.
 * - PutObject with `If-None-Match: *`: fauxqs ignores the header and overwrites. Here the check and the write are one
 *   step per key (conditional puts of a key are serialized): an existing object is 412 PreconditionFailed.
 */
// fastify's types (fauxqs is built on it; its own declarations leave a hook's arguments untyped here)
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
interface Tag {
  Key: string;
  Value: string;
}

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

export function parseTagging(xml: string): Tag[] {
  return [...xml.matchAll(/<Tag>\s*<Key>([^<]*)<\/Key>\s*<Value>([^<]*)<\/Value>\s*<\/Tag>/g)].map((m) => ({
    Key: unescapeXml(m[1]),
    Value: unescapeXml(m[2]),
  }));
}

function taggingXml(tags: Tag[]): string {
  const set = tags.map((t) => `<Tag><Key>${escapeXml(t.Key)}</Key><Value>${escapeXml(t.Value)}</Value></Tag>`);
  return `<?xml version="1.0" encoding="UTF-8"?><Tagging xmlns="${XMLNS}"><TagSet>${set.join('')}</TagSet></Tagging>`;
}

function s3Error(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/xml')
    .send(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

export function serveS3Gaps(app: FastifyInstance): void {
  /** tag sets by the object they belong to: a new object under the same key is a new record without tags */
  const tags = new WeakMap<object, Tag[]>();
  /** the current object record of each key (bucket/key), replaced by a PutObject */
  const objects = new Map<string, object>();
  const conditionalPuts = new Map<string, Promise<void>>();

  const objectRecord = (id: string) => {
    let record = objects.get(id);
    if (!record) objects.set(id, (record = {}));
    return record;
  };

  /** fauxqs's own answer to a GET of the object: 200, or its NoSuchKey / NoSuchBucket error */
  const read = (path: string) => app.inject({ method: 'GET', url: path });

  /** runs fn after every earlier conditional put of the same key */
  const serialized = async <T>(id: string, fn: () => Promise<T>): Promise<T> => {
    const before = conditionalPuts.get(id) ?? Promise.resolve();
    let done!: () => void;
    const mine = before.then(() => new Promise<void>((resolve) => (done = resolve)));
    conditionalPuts.set(id, mine);
    await before;
    try {
      return await fn();
    } finally {
      done();
      if (conditionalPuts.get(id) === mine) conditionalPuts.delete(id);
    }
  };

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.routeOptions.url !== '/:bucket/*') return;
    const { bucket, '*': key } = request.params as { bucket: string; '*': string };
    if (!key) return;
    const id = `${bucket}/${key}`;
    const path = request.url.split('?')[0];
    const query = request.query as Record<string, string | undefined>;

    if ('tagging' in query) {
      if (request.method !== 'GET' && request.method !== 'PUT')
        return s3Error(reply, 501, 'NotImplemented', `${request.method} ?tagging is not emulated`);
      const current = await read(path);
      if (current.statusCode !== 200)
        return reply.code(current.statusCode).header('content-type', 'application/xml').send(current.body);
      if (request.method === 'GET')
        return reply.header('content-type', 'application/xml').send(taggingXml(tags.get(objectRecord(id)) ?? []));
      tags.set(objectRecord(id), parseTagging((request.body as Buffer | undefined)?.toString('utf8') ?? ''));
      return reply.code(200).send();
    }
    if (request.method !== 'PUT' || query.uploadId !== undefined) return;
    if (request.headers['x-amz-tagging'] !== undefined)
      return s3Error(reply, 501, 'NotImplemented', 'tags sent with PutObject are not emulated');
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch === undefined) {
      objects.set(id, {});
      return;
    }
    if (ifNoneMatch !== '*') return s3Error(reply, 501, 'NotImplemented', 'If-None-Match other than * on PUT');
    const headers = { ...request.headers };
    for (const h of ['if-none-match', 'host', 'content-length', 'connection']) delete headers[h];
    const answer = await serialized(id, async () => {
      if ((await app.inject({ method: 'HEAD', url: path })).statusCode === 200) return null;
      const put = await app.inject({
        method: 'PUT',
        url: request.url,
        headers,
        payload: (request.body as Buffer | undefined) ?? Buffer.alloc(0),
      });
      if (put.statusCode === 200) objects.set(id, {});
      return put;
    });
    if (answer === null)
      return s3Error(reply, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
    for (const [name, value] of Object.entries(answer.headers))
      if (!['content-length', 'connection', 'date', 'transfer-encoding'].includes(name) && value !== undefined)
        reply.header(name, value);
    return reply.code(answer.statusCode).send(answer.rawPayload);
  });
}
