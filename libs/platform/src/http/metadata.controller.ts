import { Controller, Get } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Authenticated } from './current-actor.decorator';
import { VersionController } from './version.controller';

/**
 * GitLab 15.2's `GET /metadata`: the version and revision `/version` answers (read from it, so the two
 * never differ), no Kubernetes agent server (`kas`, camelCase inside as GitLab's GraphQL names it) and
 * not the enterprise edition (15.6's `enterprise`).
 */
@Controller('metadata')
export class MetadataController {
  constructor(private readonly modules: ModuleRef) {}

  @Get()
  @Authenticated()
  async metadata() {
    const { version, revision } = await this.modules.get(VersionController, { strict: false }).version();
    return { version, revision, kas: { enabled: false, externalUrl: null, version: null }, enterprise: false };
  }
}
