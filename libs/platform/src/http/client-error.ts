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
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({ message: `${status} ${reason}` });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
