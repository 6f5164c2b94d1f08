import { FieldErrors, LodeConfig } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** An uploaded file as the multipart parser leaves it on disk. */
export interface UploadedFileRef {
  path: string;
  originalname: string;
  size: number;
}

/** GitLab's AvatarUploader: raster images only, at most 200 KB. */
const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.bmp', '.tiff', '.ico']);
export const MAX_AVATAR_BYTES = 200 * 1024;

/** Users' avatars under `$LODE_DATA_DIR/uploads/-/system/user/avatar/<id>/`, where GitLab keeps them. */
@Injectable()
export class AvatarStore {
  constructor(private readonly config: LodeConfig) {}

  /** The stored file name for an upload, or a field error in GitLab's words. */
  check(file: UploadedFileRef, errors: FieldErrors): string | undefined {
    const name = safeFileName(file.originalname);
    if (!IMAGE_EXTENSIONS.has(extname(name).toLowerCase())) {
      errors.add(
        'avatar',
        'You are not allowed to upload "' +
          extname(name).replace('.', '') +
          '" files, allowed types: png, jpg, jpeg, gif, bmp, tiff, ico',
      );
      return undefined;
    }
    if (file.size > MAX_AVATAR_BYTES) {
      errors.add('avatar', 'is too big (should be at most 200 KB)');
      return undefined;
    }
    return name;
  }

  dir(userId: number): string {
    return join(this.config.dataDir, 'uploads', '-', 'system', 'user', 'avatar', String(userId));
  }

  url(userId: number, fileName: string): string {
    return `${this.config.externalUrl}/uploads/-/system/user/avatar/${userId}/${encodeURIComponent(fileName)}`;
  }

  /** Moves the upload into place, replacing an earlier avatar. */
  async place(userId: number, file: UploadedFileRef, fileName: string): Promise<void> {
    const dir = this.dir(userId);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const target = join(dir, fileName);
    await rename(file.path, target).catch(async () => {
      await copyFile(file.path, target); // another file system: copy instead
      await rm(file.path, { force: true });
    });
  }

  async remove(userId: number): Promise<void> {
    await rm(this.dir(userId), { recursive: true, force: true });
  }
}

/** A file name with no path in it: `/`, `\`, `..` and control characters go. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/\.\.+/g, '.')
    .replace(/^\.+/, '')
    .trim();
  return cleaned.slice(-200) || 'file';
}
