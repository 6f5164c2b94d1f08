import type { HeldBlob, RawBlob } from '@app/git';
import type { Response } from 'express';

/** What keeps a blob's bytes from being rendered as a page of Lode's origin (see `sendRawBlob`). */
const SANDBOX_HEADERS: readonly string[] = [
  'Content-Disposition',
  'inline',
  'Content-Security-Policy',
  "sandbox; default-src 'none'",
];
const TEXT_BLOB_HEADERS = ['Content-Type', 'text/plain; charset=utf-8', ...SANDBOX_HEADERS];
const BINARY_BLOB_HEADERS = ['Content-Type', 'application/octet-stream', ...SANDBOX_HEADERS];

/**
 * A kept blob's own headers as names and values in turn, for an answer sent whole from memory
 * (platform's `HotAnswer`, which adds the length and the common `X-Content-Type-Options: nosniff`):
 * the same as `sendRawBlob` sets.
 */
export function rawBlobHeaders(binary: boolean): readonly string[] {
  return binary ? BINARY_BLOB_HEADERS : TEXT_BLOB_HEADERS;
}

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
  for (let i = 0; i < SANDBOX_HEADERS.length; i += 2) res.setHeader(SANDBOX_HEADERS[i], SANDBOX_HEADERS[i + 1]);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if ('content' in blob) return void res.end(blob.content);
  res.on('close', () => {
    if (!res.writableFinished) blob.cancel();
  });
  blob.stream.on('error', () => res.destroy());
  blob.stream.pipe(res);
}
