/**
 * `bytes` in memory of its own: a small Buffer made the usual way (`Buffer.from`, a stream's chunk
 * sliced) is a view into one of Node's shared 8 KB slabs, which a cache keeping it would hold whole
 * while its byte budget counts only the view's length. Copies only when it is such a view.
 */
export function ownBuffer(bytes: string | Buffer): Buffer {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  if (buffer.byteLength === buffer.buffer.byteLength) return buffer;
  const own = Buffer.allocUnsafeSlow(buffer.length);
  buffer.copy(own);
  return own;
}
