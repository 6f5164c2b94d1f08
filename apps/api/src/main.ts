import 'reflect-metadata';
import { LodeConfig, runMigrations } from '@app/platform';
import { SeedRoot } from '@app/users';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { createHttpApp, logLevels } from './http-app';
import { LodeModule, MIGRATIONS } from './lode.module';

/**
 * `npm start`: migrations, then the API and the workers in one process (`LODE_ROLE=all`), or one
 * side of them (`api`, `worker`), then root's first start.
 */
async function bootstrap(): Promise<void> {
  const config = LodeConfig.fromEnv();
  const logger = new Logger('Lode');
  await runMigrations(config, MIGRATIONS);
  const app = config.runsApi
    ? await createHttpApp(config)
    : await NestFactory.createApplicationContext(LodeModule.forRoot(config), { logger: logLevels(config.logLevel) });
  app.enableShutdownHooks();
  await app.init(); // registers command handlers before the first command
  await app.get(CommandBus).execute(new SeedRoot());
  if (config.runsApi) {
    await (app as INestApplication).listen(config.port, config.host);
    logger.log(`Lode (${config.role}) listening on http://${config.host}:${config.port}, external URL ${config.externalUrl}`);
  } else {
    logger.log(`Lode worker running`);
  }
}

bootstrap().catch((err) => {
  new Logger('Lode').error(`start-up failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
