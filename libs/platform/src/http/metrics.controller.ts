import { Controller, Get, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Req } from '@nestjs/common';
import type { Actor } from '../context';
import { LodeConfig } from '../config/lode-config';
import { NotFound } from '../errors';
import { AddressAllowlist } from '../metrics/address-allowlist';
import { Metrics } from '../metrics/metrics';
import { CurrentActor, RefusedCredentialsAreAnonymous } from './current-actor.decorator';

/**
 * `GET /-/metrics`, Prometheus' text format, as GitLab serves it: to the addresses of its monitoring
 * IP allowlist (LODE_METRICS_ALLOW, loopback by default) and to administrators' tokens; everyone else
 * is told there is nothing here (404), as GitLab does, a refused or non-administrator token too (GitLab
 * reads no token there): nothing tells a stranger the endpoint exists.
 */
@Controller('-')
export class MetricsController {
  private readonly allowlist: AddressAllowlist;

  constructor(
    private readonly metrics: Metrics,
    config: LodeConfig,
  ) {
    this.allowlist = new AddressAllowlist(config.metricsAllow);
  }

  @Get('metrics')
  @RefusedCredentialsAreAnonymous()
  async scrape(@Req() req: Request, @Res() res: Response, @CurrentActor() actor?: Actor): Promise<void> {
    if (!actor?.isAdmin && !this.allowlist.allows(req.ip)) throw new NotFound();
    const { contentType, body } = await this.metrics.text();
    res.status(200).setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(body);
  }
}
