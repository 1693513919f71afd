// Socket.IO namespaces over the same change feeds as the SSE endpoints.
import type http from 'node:http';
import { Server as SocketServer, type ExtendedError, type ServerOptions, type Socket } from 'socket.io';
import type { Need } from '../auth/roles';
import type { Query } from '../list';
import { STREAMS, type Predicate } from './catalog';
import type { Feeds } from './feed';
import { dropSocket, socketBacklog } from './limits';

type Guard = (socket: Socket, next: (err?: ExtendedError) => void) => void;
/** The role check of one namespace, given the role the stream declares (api/auth socketAuth). */
type GuardFor = (need: Need) => Guard;

/**
 * Socket.IO namespaces over the same feeds; filters come from the handshake query. `guard` (authentication,
 * api/auth/) runs on every connection to a namespace, with that stream's role, before it joins. `access`
 * (api/security/): the handshake's Host and Origin check and the CORS origins; none given, no CORS at all.
 */
export function attachSocketIo(
  server: http.Server,
  feeds: Feeds,
  guard?: GuardFor,
  access: Pick<ServerOptions, 'allowRequest' | 'cors'> = {},
): SocketServer {
  const io = new SocketServer(server, { ...access, serveClient: false });
  for (const s of STREAMS) {
    const nsp = io.of(s.namespace);
    if (guard) nsp.use(guard(s.role));
    nsp.on('connection', (socket) => {
      let match: Predicate;
      try {
        match = s.filter(socket.handshake.query as Query);
      } catch (e) {
        socket.emit('error', { message: (e as Error).message });
        socket.disconnect(true);
        return;
      }
      const unsubscribe = feeds[s.feed].subscribe((e) => {
        if (!match(e.doc)) return;
        // A client that does not read is let go rather than buffered for without end.
        if (feeds.limits.overBuffered(socketBacklog(socket))) {
          unsubscribe();
          feeds.limits.dropped('socketio', { namespace: s.namespace });
          dropSocket(socket);
          return;
        }
        socket.emit(s.event, s.render(e.doc));
      });
      socket.on('disconnect', unsubscribe);
    });
  }
  return io;
}
