import { NotFound, RouteIntPipe } from '@app/platform';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { AvatarStore, safeFileName, type OwnerAvatarStore } from '../avatars';

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tiff': 'image/tiff',
  '.ico': 'image/vnd.microsoft.icon',
};

/**
 * Answers the avatar file `filename` of owner `id` from `store`, as GitLab does: raster images only,
 * never sniffed, 404 for anything else. Shared by the user and project avatar routes.
 */
export async function sendAvatar(store: OwnerAvatarStore, id: number, filename: string, res: Response): Promise<void> {
  const name = safeFileName(filename);
  const type = TYPES[extname(name).toLowerCase()];
  const path = join(store.dir(id), name);
  const info = type && name === filename ? await stat(path).catch(() => undefined) : undefined;
  if (!info?.isFile()) throw new NotFound('File');
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', info.size);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Disposition', 'inline');
  res.setHeader('Cache-Control', 'public, max-age=300');
  createReadStream(path).pipe(res);
}

/** Serves uploaded user avatars where `avatar_url` points, as GitLab does; raster images only, never sniffed. */
@Controller('uploads/-/system/user/avatar')
export class AvatarsController {
  constructor(private readonly avatars: AvatarStore) {}

  @Get(':id/:filename')
  async serve(
    @Param('id', RouteIntPipe) id: number,
    @Param('filename') filename: string,
    @Res() res: Response,
  ): Promise<void> {
    await sendAvatar(this.avatars, id, filename, res);
  }
}
