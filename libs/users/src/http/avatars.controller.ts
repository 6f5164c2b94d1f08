import { NotFound, RouteIntPipe } from '@app/platform';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { AvatarStore, safeFileName } from '../avatars';

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tiff': 'image/tiff',
  '.ico': 'image/vnd.microsoft.icon',
};

/** Serves uploaded avatars where `avatar_url` points, as GitLab does; raster images only, never sniffed. */
@Controller('uploads/-/system/user/avatar')
export class AvatarsController {
  constructor(private readonly avatars: AvatarStore) {}

  @Get(':id/:filename')
  async serve(
    @Param('id', RouteIntPipe) id: number,
    @Param('filename') filename: string,
    @Res() res: Response,
  ): Promise<void> {
    const name = safeFileName(filename);
    const type = TYPES[extname(name).toLowerCase()];
    const path = join(this.avatars.dir(id), name);
    const info = type && name === filename ? await stat(path).catch(() => undefined) : undefined;
    if (!info?.isFile()) throw new NotFound('File');
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Length', info.size);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Disposition', 'inline');
    res.setHeader('Cache-Control', 'public, max-age=300');
    createReadStream(path).pipe(res);
  }
}
