// Socket.IO namespaces over the same change feeds as the SSE endpoints.
import type http from 'node:http';
import { Server as SocketServer } from 'socket.io';
import { STREAMS, type Predicate, type Query } from './catalog';
import type { Feeds } from './feed';

/** Socket.IO namespaces over the same feeds; filters come from the handshake query. */
export function attachSocketIo(server: http.Server, feeds: Feeds): SocketServer {
  const io = new SocketServer(server, { cors: { origin: '*' }, serveClient: false });
  for (const s of STREAMS) {
    io.of(s.namespace).on('connection', (socket) => {
      let match: Predicate;
      try {
        match = s.filter(socket.handshake.query as Query);
      } catch (e) {
        socket.emit('error', { message: (e as Error).message });
        socket.disconnect(true);
        return;
      }
      const unsubscribe = feeds[s.feed].subscribe((e) => {
        if (match(e.doc)) socket.emit(s.event, s.render(e.doc));
      });
      socket.on('disconnect', unsubscribe);
    });
  }
  return io;
}
