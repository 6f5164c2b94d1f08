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

/** Whose avatar: GitLab keeps each kind under `uploads/-/system/<kind>/avatar/<id>/`. */
export type AvatarOwnerKind = 'user' | 'project';

/** Where GitLab serves an avatar, below the external URL: `/uploads/-/system/<kind>/avatar/<id>/<file>`. */
export function avatarPath(kind: AvatarOwnerKind, ownerId: number, fileName: string): string {
  return `/uploads/-/system/${kind}/avatar/${ownerId}/${encodeURIComponent(fileName)}`;
}

/**
 * Avatars of one kind of owner under `$LODE_DATA_DIR/uploads/-/system/<kind>/avatar/<id>/`, where
 * GitLab keeps them, and their URLs under `LODE_EXTERNAL_URL`.
 */
export abstract class OwnerAvatarStore {
  protected constructor(
    private readonly config: LodeConfig,
    readonly kind: AvatarOwnerKind,
  ) {}

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

  dir(ownerId: number): string {
    return join(this.config.dataDir, 'uploads', '-', 'system', this.kind, 'avatar', String(ownerId));
  }

  url(ownerId: number, fileName: string): string {
    return this.config.externalUrl + avatarPath(this.kind, ownerId, fileName);
  }

  /** Moves the upload into place, replacing an earlier avatar. */
  async place(ownerId: number, file: UploadedFileRef, fileName: string): Promise<void> {
    const dir = this.dir(ownerId);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const target = join(dir, fileName);
    await rename(file.path, target).catch(async () => {
      await copyFile(file.path, target); // another file system: copy instead
      await rm(file.path, { force: true });
    });
  }

  async remove(ownerId: number): Promise<void> {
    await rm(this.dir(ownerId), { recursive: true, force: true });
  }
}

/** Users' avatars: `uploads/-/system/user/avatar/<user id>/`. */
@Injectable()
export class AvatarStore extends OwnerAvatarStore {
  constructor(config: LodeConfig) {
    super(config, 'user');
  }
}

/** Projects' avatars: `uploads/-/system/project/avatar/<project id>/` (provided by the projects context). */
@Injectable()
export class ProjectAvatarStore extends OwnerAvatarStore {
  constructor(config: LodeConfig) {
    super(config, 'project');
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
