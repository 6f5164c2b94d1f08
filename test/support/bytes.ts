/** What the parser reads of an answer: its data and end events (supertest hands it the response stream). */
interface ByteSource {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

/**
 * A supertest parser that keeps an answer's bytes as they came, so `res.body` is a Buffer (archives,
 * raw blobs, avatars, uploads): `.buffer(true).parse(bytes)`.
 */
export function bytes(res: ByteSource, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}
