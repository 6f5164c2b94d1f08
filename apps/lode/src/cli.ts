import 'reflect-metadata';
import { EventMetadata, LodeConfig, Logs, ProjectionRebuilder, RedactingLogger, runMigrations } from '@app/platform';
import { ChangeUserBlock, CreateAccessToken, ROOT_TOKEN_SCOPES, UserQueries } from '@app/users';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { parseArgs } from 'node:util';
import { LodeModule, MIGRATIONS } from './lode.module';

const USAGE = `usage: npm run lode -- <command> [options]

commands:
  create-token --user <username> --scopes api[,read_user,sudo] [--name <name>] [--expires YYYY-MM-DD]
      creates a personal access token and prints it once
  projections:rebuild
      empties every read model and replays all events (writers wait meanwhile)
  directory-block --user <username>    block a user as the directory synchronisation would (the API cannot lift it)
  directory-unblock --user <username>  lift such a block
`;

const CLI: EventMetadata = { origin: 'cli' };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      user: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      expires: { type: 'string' },
    },
    strict: true,
  });
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const config = LodeConfig.fromEnv();
  config.logLevel = 'warn';
  Logs.configure(config.logLevel, config.logFormat, 'stderr');
  await runMigrations(config, MIGRATIONS);
  const app = await NestFactory.createApplicationContext(LodeModule.forRoot(config, { http: false, worker: false }), {
    logger: new RedactingLogger(['error', 'warn']),
  });
  try {
    switch (command) {
      case 'create-token':
        return await createToken(app, values);
      case 'projections:rebuild':
        return await rebuild(app);
      case 'directory-block':
      case 'directory-unblock':
        return await directoryBlock(app, values.user, command === 'directory-block' ? 'block' : 'unblock');
      default:
        process.stderr.write(`unknown command ${command}\n${USAGE}`);
        return 2;
    }
  } finally {
    await app.close();
  }
}

async function userId(app: INestApplicationContext, username: string | undefined): Promise<number> {
  if (!username) throw new Error('--user is required');
  const user = await app.get(UserQueries).findByIdOrUsername(username);
  if (!user) throw new Error(`no user ${username}`);
  return user.id;
}

async function createToken(
  app: INestApplicationContext,
  v: { user?: string; scopes?: string; name?: string; expires?: string },
): Promise<number> {
  const scopes = (v.scopes ?? 'api')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !ROOT_TOKEN_SCOPES.includes(s));
  if (unknown.length) throw new Error(`unknown scope(s): ${unknown.join(', ')}`);
  const { secret } = await app.get(CommandBus).execute(
    new CreateAccessToken(
      {
        userId: await userId(app, v.user),
        name: v.name ?? 'created on the command line',
        scopes,
        impersonation: false,
        expiresAt: v.expires ?? null,
      },
      CLI,
    ),
  );
  process.stdout.write(`${secret}\n`);
  return 0;
}

async function rebuild(app: INestApplicationContext): Promise<number> {
  const started = Date.now();
  const bar = (done: number, total: number) => {
    const width = 30;
    const filled = total ? Math.round((done / total) * width) : width;
    process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} events`);
  };
  const result = await app.get(ProjectionRebuilder).rebuild((p) => bar(p.done, p.total));
  const seconds = (Date.now() - started) / 1000;
  process.stderr.write(`\nrebuilt the read models from ${result.total} events in ${seconds.toFixed(1)} s\n`);
  return 0;
}

async function directoryBlock(
  app: INestApplicationContext,
  username: string | undefined,
  action: 'block' | 'unblock',
): Promise<number> {
  const changed = await app
    .get(CommandBus)
    .execute(new ChangeUserBlock(await userId(app, username), action, true, CLI));
  process.stdout.write(changed ? `${action}ed ${username}\n` : `${username} unchanged\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`lode: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
