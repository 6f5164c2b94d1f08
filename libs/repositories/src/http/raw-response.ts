import type { HeldBlob, RawBlob } from '@app/git';
import type { Response } from 'express';

/**
 * Sends a blob's bytes, streaming a large one. Never rendered by a browser: `nosniff` and a sandboxing
 * policy keep HTML or SVG from a repository from running on Lode's origin (GitLab 10.x sent the blob's
 * own type).
 */
export function sendRawBlob(res: Response, blob: HeldBlob | RawBlob, rasterImageType?: string): void {
  res.status(200);
  // A raster image's own type (the web pages' <img>) is safe: no browser runs anything in one.
  res.setHeader(
    'Content-Type',
    rasterImageType ?? (blob.binary ? 'application/octet-stream' : 'text/plain; charset=utf-8'),
  );
  res.setHeader('Content-Length', String(blob.size));
  res.setHeader('Content-Disposition', 'inline');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
  if ('content' in blob) return void res.end(blob.content);
  res.on('close', () => {
    if (!res.writableFinished) blob.cancel();
  });
  blob.stream.on('error', () => res.destroy());
  blob.stream.pipe(res);
}
