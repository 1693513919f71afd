// Server-Sent Events: each event is `id: <resume token>`, `event: <name>`, `data: <resource JSON>`. A
// client that reconnects with Last-Event-ID is resumed after that event (on a change stream of its own, so
// a principal may hold only so many: limits.ts), or, if that event is older than the change history the
// database keeps, re-reads every matching record and then follows (feed.ts, resume); a comment line every
// 15 s keeps proxies from closing an idle stream. A client that leaves too much unread is disconnected rather than buffered for without end.
import type { Context } from 'koa';
import type { Document } from 'mongodb';
import { PassThrough } from 'node:stream';
import type { Principal } from '../auth/authenticate';
import { refuseCrossOrigin } from '../security/host-origin';
import type { Predicate } from './catalog';
import type { ChangeFeed, FeedEvent } from './feed';
import type { StreamLimits } from './limits';

export function sse(
  ctx: Context,
  feed: ChangeFeed,
  match: Predicate,
  event: string,
  render: (d: Document) => unknown,
  limits: StreamLimits,
): void {
  // A stream is read by a page: one of another origin gets 403 before anything is subscribed.
  refuseCrossOrigin(ctx);
  const body = new PassThrough();
  const principal = (ctx.state.principal as Principal | undefined)?.id ?? 'anonymous';
  let ended = false;
  // Written for this client and not yet taken by the kernel: the PassThrough's two sides, then the response's.
  const unsent = () => body.writableLength + body.readableLength + ctx.res.writableLength;
  const send = (e: FeedEvent) => {
    if (ended || !match(e.doc)) return;
    if (limits.overBuffered(unsent())) return drop();
    // A re-read record has no id: the client keeps the last one it had until a live event.
    body.write(`${e.id ? `id: ${e.id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(render(e.doc))}\n\n`);
  };
  // A re-read waits while this much is unsent, well under the bound that drops a client.
  const drain = async () => {
    while (!ended && unsent() > limits.maxBuffered / 4) await new Promise((r) => setTimeout(r, 10));
  };
  const reread = () =>
    body.write(
      ': Last-Event-ID is older than the change history kept; every matching record follows as it is now, then live changes\n\n',
    );
  const lastId = ctx.get('Last-Event-ID');
  const release = lastId ? limits.acquireResumed(principal) : undefined;
  let unsubscribe: () => void;
  try {
    unsubscribe = lastId ? feed.resume(lastId, send, { ended: resumeEnded, reread, drain }) : feed.subscribe(send);
  } catch (e) {
    release?.();
    throw e;
  }
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
  const ping = setInterval(() => {
    if (!ended) body.write(': ping\n\n');
  }, 15_000);
  function close() {
    if (ended) return;
    ended = true;
    clearInterval(ping);
    unsubscribe();
    release?.();
    body.end();
  }
  // Its change stream failed or the API is closing: the client reconnects (and is resumed again, if it can be).
  function resumeEnded(err?: unknown) {
    if (err && !ended) body.write(': this stream cannot go on from here; reconnect\n\n');
    close();
  }
  function drop() {
    limits.dropped('sse', { path: ctx.path, principal });
    close();
    body.destroy();
    ctx.req.socket.destroy();
  }
  ctx.req.on('close', close);
  ctx.res.on('close', close);
}
