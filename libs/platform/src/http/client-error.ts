import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const ANSWERS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Request Entity Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * The http server's `clientError` handler: what Node's parser refuses (oversized headers, a
 * malformed request line or header) gets the status Node would send, with a JSON body like every
 * other answer, e.g. `{"message":"431 Request Header Fields Too Large"}`. Nothing is logged: the
 * request never reached Lode.
 */
export function sendClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Already closing after an answer in flight: the parser repeats its error for every later chunk.
  if (lingering.has(socket)) return;
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (inFlight) {
    // The bytes that failed to parse came after a request that is being answered: most often a body
    // sent without Content-Length or chunked framing (Node's own client does so for a GET), which
    // HTTP reads as the next request. The answer is let finish; the connection then closes after it
    // (the client asked for no other, or gets no other). Cutting it now would reset the connection
    // and lose the answer; what the client still sends is read and dropped meanwhile, so the close
    // is a FIN, not a reset for unread data.
    lingering.add(socket);
    socket.on('data', () => undefined);
    // Node ends such a connection with destroySoon() once the answer is written, which would reset it
    // if the client's bytes are still arriving: here it half-closes instead, and the socket goes when
    // the client closes its side or the linger time is over.
    const gently = socket as Socket & { destroySoon?: () => void };
    const close = () => {
      if (socket.destroyed) return;
      socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    gently.destroySoon = close;
    socket.once('end', () => socket.destroy());
    if (inFlight.writableFinished) close();
    else {
      inFlight.once('finish', close);
      inFlight.once('close', close);
    }
    return;
  }
  const [status, reason] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({ message: `${status} ${reason}` });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Sockets closing after their answer in flight (see above), and how long they may still send. */
const lingering = new WeakSet<Socket>();
const LINGER_MS = 2000;
