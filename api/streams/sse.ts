// Server-Sent Events: each event is `id: <resume token>`, `event: <name>`, `data: <resource JSON>`. A
// client that reconnects with Last-Event-ID is resumed after that event; a comment line every 15 s keeps
// proxies from closing an idle stream.
import type { Context } from 'koa';
import type { Document } from 'mongodb';
import { PassThrough } from 'node:stream';
import { refuseCrossOrigin } from '../security/host-origin';
import type { Predicate } from './catalog';
import type { ChangeFeed, FeedEvent } from './feed';

export function sse(
  ctx: Context,
  feed: ChangeFeed,
  match: Predicate,
  event: string,
  render: (d: Document) => unknown,
): void {
  // A stream is read by a page: one of another origin gets 403 before anything is subscribed.
  refuseCrossOrigin(ctx);
  const body = new PassThrough();
  const send = (e: FeedEvent) => {
    if (match(e.doc)) body.write(`id: ${e.id}\nevent: ${event}\ndata: ${JSON.stringify(render(e.doc))}\n\n`);
  };
  const lastId = ctx.get('Last-Event-ID');
  const unsubscribe = lastId ? feed.resume(lastId, send) : feed.subscribe(send);
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.set({
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  ctx.status = 200;
  ctx.body = body;
  body.write(': connected\n\n');
  const ping = setInterval(() => body.write(': ping\n\n'), 15_000);
  const close = () => {
    clearInterval(ping);
    unsubscribe();
    body.end();
  };
  ctx.req.on('close', close);
}
